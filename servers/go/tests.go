package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"

	"wsbench/server/pb/bench"
	"wsbench/server/pb/counters"
	"wsbench/server/pb/people"
	"wsbench/server/pb/person"
)

// A built-in test (docs/protocol.md, "The tests"): its message type, and the messages a `down`
// connection is sent, loaded from fixtures/ on first use.
type testDef struct {
	id     int // 0: no number
	name   string
	newMsg func() proto.Message
	// the stream's file under fixtures/streams and the one message's file under data/ ("" for people)
	stream, repeated string

	once     sync.Once
	messages []proto.Message // the stream (people: its one message)
	one      proto.Message   // payload=repeated
	loadErr  error
}

var tests = []*testDef{
	{id: 1, name: "numbers", newMsg: func() proto.Message { return new(bench.Numbers) }, stream: "numbers", repeated: "1-numbers.json"},
	{id: 2, name: "strings", newMsg: func() proto.Message { return new(bench.Strings) }, stream: "strings", repeated: "2-strings.json"},
	{id: 3, name: "medium", newMsg: func() proto.Message { return new(bench.Medium) }, stream: "medium", repeated: "3-medium.json"},
	{id: 4, name: "large", newMsg: func() proto.Message { return new(bench.Large) }, stream: "large", repeated: "4-large.json"},
	{id: 5, name: "small", newMsg: func() proto.Message { return new(bench.Small) }, stream: "small", repeated: "5-small.json"},
	{name: "people", newMsg: func() proto.Message { return new(people.People) }},
	{name: "person", newMsg: func() proto.Message { return new(person.Person) }, stream: "person", repeated: "person.json"},
	{name: "counters", newMsg: func() proto.Message { return new(counters.Counters) }, stream: "counters", repeated: "counters.json"},
}

// resolveTest finds a test by number or name (trimmed, any case), or says why not, as the Node
// server does (lib/payloads/catalog.js).
func resolveTest(param string) (*testDef, error) {
	key := strings.ToLower(strings.TrimSpace(param))
	for _, t := range tests {
		if t.name == key || (t.id != 0 && strconv.Itoa(t.id) == key) {
			return t, nil
		}
	}
	names := make([]string, len(tests))
	for i, t := range tests {
		if t.id != 0 {
			names[i] = fmt.Sprintf("%d %s", t.id, t.name)
		} else {
			names[i] = t.name
		}
	}
	return nil, fmt.Errorf("unknown test '%s': expected one of %s", param, strings.Join(names, ", "))
}

// A wire format: how a message's bytes become the test's generated type and back.
type codec struct {
	name   string
	binary bool
	decode func(data []byte, m proto.Message) error
	encode func(m proto.Message) ([]byte, error)
}

var codecs = []*codec{
	// json: encoding/json into the generated structs (their json tags are the .proto's field
	// names), as a Go service would take JSON.
	{name: "json", decode: func(data []byte, m proto.Message) error { return json.Unmarshal(data, m) },
		encode: func(m proto.Message) ([]byte, error) { return json.Marshal(m) }},
	{name: "protobuf", binary: true, decode: func(data []byte, m proto.Message) error { return proto.Unmarshal(data, m) },
		encode: func(m proto.Message) ([]byte, error) { return proto.Marshal(m) }},
}

func findCodec(name string) (*codec, error) {
	names := make([]string, len(codecs))
	for i, c := range codecs {
		if c.name == name {
			return c, nil
		}
		names[i] = c.name
	}
	return nil, fmt.Errorf("unknown format '%s': expected one of %s", name, strings.Join(names, ", "))
}

// load reads the test's stream and its one message once, for `down`.
func (t *testDef) load(root string) error {
	t.once.Do(func() {
		if t.name == "people" {
			t.one = buildPeople(50000)
			t.messages = []proto.Message{t.one}
			return
		}
		t.messages, t.loadErr = readStream(filepath.Join(root, "fixtures", "streams", t.stream+".jsonl.gz"), t.newMsg)
		if t.loadErr != nil {
			return
		}
		text, err := os.ReadFile(filepath.Join(root, "data", t.repeated))
		if err != nil {
			t.loadErr = err
			return
		}
		one := t.newMsg()
		if err := json.Unmarshal(text, one); err != nil {
			t.loadErr = fmt.Errorf("%s: %w", t.repeated, err)
			return
		}
		t.one = one
	})
	return t.loadErr
}

func readStream(file string, newMsg func() proto.Message) ([]proto.Message, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	scanner := bufio.NewScanner(gz)
	scanner.Buffer(make([]byte, 1<<20), 1<<24)
	var messages []proto.Message
	for scanner.Scan() {
		line := scanner.Bytes()
		if len(line) == 0 {
			continue
		}
		m := newMsg()
		if err := json.Unmarshal(line, m); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", file, len(messages)+1, err)
		}
		messages = append(messages, m)
	}
	if err := scanner.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(messages) == 0 {
		return nil, fmt.Errorf("%s: no messages", file)
	}
	return messages, nil
}

// buildPeople is the people test's one message, by the rule in docs/protocol.md ("Fixtures").
func buildPeople(count int) *people.People {
	p := &people.People{Person: make([]*people.Person, count)}
	for i := range count {
		s := strconv.Itoa(i)
		n := int32(i)
		street := "Street Number " + s
		p.Person[i] = &people.Person{
			Name:    "Person Number " + s,
			Address: []*people.Address{{Street: street, Number: &n}, {Street: street, Number: &n}},
			Mobile:  []string{"111111" + s, "222222" + s},
			Email:   []string{"emailperson" + s + "@somewhere.com", "otheremailperson" + s + "@somewhere.com"},
		}
	}
	return p
}

// findRoot is the project's root (where fixtures/manifest.json is): --root, or the first
// directory holding it from the working directory or the executable's upwards.
func findRoot(flagRoot string) (string, error) {
	if flagRoot != "" {
		return flagRoot, nil
	}
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if exe, err := os.Executable(); err == nil {
		starts = append(starts, filepath.Dir(exe))
	}
	for _, dir := range starts {
		for {
			if _, err := os.Stat(filepath.Join(dir, "fixtures", "manifest.json")); err == nil {
				return dir, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return "", fmt.Errorf("cannot find the project's fixtures/manifest.json above the working directory or the executable: pass --root")
}
