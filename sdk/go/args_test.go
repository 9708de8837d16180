package wasmcp

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/wasmcp/wasmcp/internal/jsonscan"
)

// planArgs is a struct of every kind of field an argPlan handles.
type planArgs struct {
	Text   string            `json:"text"`
	N      int               `json:"n"`
	I8     int8              `json:"i8"`
	U      uint16            `json:"u,omitempty"`
	F      float32           `json:"f"`
	D      float64           `json:"d"`
	B      bool              `json:"b"`
	Untag  string            //
	List   []string          `json:"list"`
	Map    map[string]any    `json:"map"`
	Ptr    *int              `json:"ptr"`
	Any    any               `json:"any"`
	Num    json.Number       `json:"num"`
	When   time.Time         `json:"when"`
	Raw    json.RawMessage   `json:"raw"`
	Nested struct{ A int }   `json:"nested"`
	Skip   string            `json:"-"`
	Dash   string            `json:"-,"`
	hidden int               //
	Named  namedString       `json:"named"`
	Tags   map[string]string `json:"tags"`
}

type namedString string

var argCases = []string{
	`{}`,
	`{"text":"hello","n":-3,"i8":127,"u":65535,"f":1.5,"d":1e300,"b":true,"Untag":"u"}`,
	`{"text":"a\nb\"c\\d\/e\u00e9\ud83d\ude00\ud800x\udc00\u0000","named":"n"}`,
	`{"list":["a"],"map":{"k":[1,{"x":null}]},"ptr":5,"any":1.5,"num":12,"when":"2026-01-02T03:04:05Z","raw":{"a" : 1},"nested":{"A":2}}`,
	`{"text":null,"n":null,"b":null,"list":null,"ptr":null,"tags":{"a":"b"}}`,
	`{"-":"dash","Skip":"no","hidden":1,"other":[1,2,3]}`,
	`{"b":false,"d":-0,"f":3.4028235e38}`,
	// Left to encoding/json:
	`{"TEXT":"x"}`,
	`{"text":"a","text":"b"}`,
	`{"n":1.5}`,
	`{"i8":128}`,
	`{"u":-1}`,
	`{"f":1e39}`,
	`{"text":1}`,
	`{"b":"true"}`,
	`{"list":{}}`,
	`{"te\u0078t":"x"}`,
	`{"when":"yesterday"}`,
	`[]`,
}

func checkArgs(t *testing.T, pl *argPlan, in []byte) bool {
	t.Helper()
	if !jsonscan.Valid(in) {
		return false
	}
	var fast, slow planArgs
	if !pl.decode(in, reflect.ValueOf(&fast).Elem()) {
		return false
	}
	if err := json.Unmarshal(in, &slow); err != nil {
		t.Fatalf("%s: argPlan decoded what json.Unmarshal refuses: %v", in, err)
	}
	if !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\nargPlan        %+v\njson.Unmarshal %+v", in, fast, slow)
	}
	return true
}

func TestArgPlan(t *testing.T) {
	pl := newArgPlan(reflect.TypeFor[planArgs]())
	if pl == nil {
		t.Fatal("no plan for planArgs")
	}
	decoded := 0
	for _, c := range argCases {
		if checkArgs(t, pl, []byte(c)) {
			decoded++
		}
	}
	if decoded != 7 {
		t.Errorf("argPlan decoded %d of the cases, want the first 7", decoded)
	}
	type embedded struct{ planArgs }
	type stringOpt struct {
		N int `json:"n,string"`
	}
	type twins struct {
		A string `json:"name"`
		B string `json:"Name"`
	}
	type odd struct {
		A string `json:"a b"`
	}
	type self struct{ time.Time }
	for _, typ := range []reflect.Type{
		reflect.TypeFor[embedded](), reflect.TypeFor[stringOpt](), reflect.TypeFor[twins](),
		reflect.TypeFor[odd](), reflect.TypeFor[*planArgs](), reflect.TypeFor[map[string]any](),
		reflect.TypeFor[time.Time](), reflect.TypeFor[self](),
	} {
		if newArgPlan(typ) != nil {
			t.Errorf("%v: got a plan, want encoding/json", typ)
		}
	}
}

func FuzzArgPlan(f *testing.F) {
	for _, c := range argCases {
		f.Add([]byte(c))
	}
	pl := newArgPlan(reflect.TypeFor[planArgs]())
	f.Fuzz(func(t *testing.T, in []byte) { checkArgs(t, pl, in) })
}

func FuzzUnquote(f *testing.F) {
	f.Add(`"plain"`)
	f.Add(`"a\nb\"c\\d\/e\u00e9\ud83d\ude00\ud800x\udc00\u0000\uD83D\uDE00"`)
	f.Add(`"\ud800\ud800\udc00"`)
	f.Fuzz(func(t *testing.T, lit string) {
		if !jsonscan.Valid([]byte(lit)) || jsonscan.Kind([]byte(lit)) != 's' {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatal(err)
		}
		got, ok := unquote([]byte(lit))
		if !ok || got != want {
			t.Fatalf("unquote(%s) = %q, %v; want %q", lit, got, ok, want)
		}
	})
}
