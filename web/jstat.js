// lib/compare/statistics.js imports 'jstat'; in the page that name maps here (see the import map in
// index.html), to the UMD build index.html has already loaded as a classic script.
export default globalThis.jStat
