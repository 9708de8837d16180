package wasmcp

import (
	"encoding/json"
	"reflect"
	"testing"
)

// envelopeCases are envelopes parseEnvelope must read as json.Unmarshal
// does, or leave to it.
var envelopeCases = []string{
	`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}},"context":{"protocolVersion":"2025-11-25","clientCapabilities":{}}}`,
	`{"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"},"_meta":{"progressToken":1}},` +
		`"context":{"protocolVersion":"2025-11-25","clientInfo":{"name":"c","version":"1"},"clientCapabilities":{"sampling":{}},"progressToken":1}}`,
	` { "method" : "tools/call" , "params" : { "name" : "x" , "arguments" : null } } `,
	`{"method":"resources/read","params":{"uri":"notes://a","requestState":"s","inputResponses":{"k":{"action":"accept"},"é":1}}}`,
	`{"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"v"},"context":{"arguments":{"x":"1","y":null}}}}`,
	`{"method":"prompts/get","params":{"name":"p","arguments":{"a":"b"}},"context":{"requestState":null,"inputResponses":null,"clientInfo":null}}`,
	`{"method":"x","params":null,"context":null}`,
	`null`,
	`{}`,
	`{"method":"x","unknown":[1,2,{"a":"b"}],"params":{"other":true}}`,
	`{"method":"x","context":{"clientInfo":{"name":"n","title":"t","version":"v","extra":1}}}`,
	// Left to encoding/json:
	`{"Method":"tools/call"}`,
	`{"method":"tools/call","method":"other"}`,
	`{"method":"a\u0062c"}`,
	`{"method":1}`,
	`{"method":"x","params":[1]}`,
	`{"method":"x","params":{"name":2}}`,
	`{"method":"x","params":{"ref":"r"}}`,
	`{"method":"x","params":{"context":{"arguments":{"a":1}}}}`,
	`{"method":"x","context":{"clientInfo":"c"}}`,
	`{"method":"x","context":{"inputResponses":{"a\"b":1}}}`,
	`{"me\u0074hod":"x"}`,
	`{"method":"x","ſ":1}`,
	`{"method":"x"`,
	`[]`,
	"{\"method\":\"\xff\"}",
}

func checkEnvelope(t *testing.T, in []byte) {
	var fast requestEnvelope
	if !parseEnvelope(in, &fast) {
		return
	}
	var slow requestEnvelope
	if err := json.Unmarshal(in, &slow); err != nil {
		t.Fatalf("%s: parseEnvelope accepted what json.Unmarshal refuses: %v", in, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\nparseEnvelope  %+v\njson.Unmarshal %+v", in, fast, slow)
	}
}

func TestParseEnvelope(t *testing.T) {
	accepted := 0
	for _, c := range envelopeCases {
		checkEnvelope(t, []byte(c))
		var env requestEnvelope
		if parseEnvelope([]byte(c), &env) {
			accepted++
		}
	}
	if accepted != 11 {
		t.Errorf("parseEnvelope read %d of the cases, want the first 11", accepted)
	}
}

func FuzzParseEnvelope(f *testing.F) {
	for _, c := range envelopeCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkEnvelope(t, in) })
}
