// The `people` payload of the published Spring Boot experiment, built in memory (not committed).

/**
 * The `people` payload, built in memory (about 12.9 MB of JSON, too big to commit) by the
 * published rule: person i has two addresses, two mobiles and two emails derived from i.
 * @param {number} [count]
 * @returns {{person: object[]}}
 */
export function buildPeople (count = 50_000) {
  return {
    person: Array.from({ length: count }, (_, i) => ({
      name: `Person Number ${i}`,
      address: [{ street: `Street Number ${i}`, number: i }, { street: `Street Number ${i}`, number: i }],
      mobile: [`111111${i}`, `222222${i}`],
      email: [`emailperson${i}@somewhere.com`, `otheremailperson${i}@somewhere.com`]
    }))
  }
}
