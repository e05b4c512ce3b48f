package person

import "encoding/json"

// MarshalJSON writes the enum by name, as the project's JSON mapping carries it (protoc-gen-go
// generates only UnmarshalJSON, which takes names and numbers). Not generated: gen.sh keeps it.
func (x Person_PhoneType) MarshalJSON() ([]byte, error) {
	return json.Marshal(x.String())
}
