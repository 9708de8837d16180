package component

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -run %s -update rewrites it):\n%s", path, t.Name(), got)
	}
}

func decodeFile(t testing.TB, path string) *Component {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// toolsJSON renders tools and skipped functions as the golden files hold
// them: the tools as tools/list lists them.
func toolsJSON(t *testing.T, tools []Tool, skipped []Skipped) []byte {
	t.Helper()
	type entry struct {
		Name         string          `json:"name"`
		Description  string          `json:"description"`
		InputSchema  json.RawMessage `json:"inputSchema"`
		OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	}
	doc := struct {
		Tools   []entry  `json:"tools"`
		Skipped []string `json:"skipped,omitempty"`
	}{Tools: []entry{}}
	for _, x := range tools {
		doc.Tools = append(doc.Tools, entry{x.Name, x.Description, x.InputSchema, x.OutputSchema})
	}
	for _, s := range skipped {
		doc.Skipped = append(doc.Skipped, s.String())
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// TestGolden checks the WIT view and the tools of every fixture
// component against testdata/NAME.wit and testdata/NAME.tools.json.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.wasm")
	if err != nil {
		t.Fatal(err)
	}
	corpus, _ := filepath.Glob(filepath.Join(corpusDir, "*.wasm"))
	files = append(files, corpus...)
	if len(files) < 4 {
		t.Fatalf("fixtures: %v", files)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".wasm")
		if strings.HasPrefix(f, corpusDir) {
			name = "components/" + name
		}
		t.Run(name, func(t *testing.T) {
			w := decodeFile(t, f).Describe()
			golden(t, name+".wit", []byte(w.String()))
			tools, skipped := w.Tools()
			golden(t, name+".tools.json", toolsJSON(t, tools, skipped))
		})
	}
}

// corpusDir holds the components built from C and Rust by
// testdata/components/build.sh, each with the WIT wasm-tools prints for
// it (NAME.ref.wit).
const corpusDir = "../../testdata/components"

// TestReferenceWIT compares the WIT view of the corpus with what
// wasm-tools prints: the same imports and exports, in the same order,
// with the same function signatures and doc comments. (wasm-tools names
// an interface import or export without its body.)
func TestReferenceWIT(t *testing.T) {
	refs, _ := filepath.Glob(filepath.Join(corpusDir, "*.ref.wit"))
	if len(refs) < 2 {
		t.Fatalf("references: %v", refs)
	}
	for _, ref := range refs {
		t.Run(filepath.Base(ref), func(t *testing.T) {
			b, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			in := false
			for _, line := range strings.Split(string(b), "\n") {
				line = strings.TrimSpace(line)
				switch {
				case strings.HasPrefix(line, "world "):
					in = true
				case line == "}":
					in = false
				case in && line != "":
					want = append(want, line)
				}
			}
			w := decodeFile(t, strings.TrimSuffix(ref, ".ref.wit")+".wasm").Describe()
			var got []string
			add := func(verb string, items []WorldItem) {
				for _, it := range items {
					for _, d := range strings.Split(it.Docs, "\n") {
						if it.Docs != "" {
							got = append(got, strings.TrimSpace("/// "+d))
						}
					}
					if it.Func != nil {
						got = append(got, verb+" "+it.Name+": "+funcSig(it.Func)+";")
					} else {
						got = append(got, verb+" "+it.Name+";")
					}
				}
			}
			add("import", w.Imports)
			add("export", w.Exports)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("WIT view:\n%s\nwasm-tools:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestToolName(t *testing.T) {
	// The cases of Wassette's component2json tests, plus versions.
	cases := []struct{ export, fn, want string }{
		{"", "get-weather", "get-weather"},
		{"", "list-directory", "list-directory"},
		{"foo:foo/foo", "generate", "foo_foo_foo_generate"},
		{"local:time-server/time", "get-current-time", "local_time-server_time_get-current-time"},
		{"wasi:http/types", "request", "wasi_http_types_request"},
		{"interface/name", "func-name", "interface_name_func-name"},
		{"", "function.name", "function_name"},
		{"", "UPPERCASE", "uppercase"},
		{"", "Mixed-CASE", "mixed-case"},
		{"", "special@chars#here", "special_chars_here"},
		{"wasi:cli/run@0.2.0", "run", "wasi_cli_run_0_2_0_run"},
		{"component:fetch-rs/fetch@0.1.0", "fetch", "component_fetch-rs_fetch_0_1_0_fetch"},
		{"", "é", "_"},
	}
	for _, c := range cases {
		if got := ToolName(c.export, c.fn); got != c.want {
			t.Errorf("ToolName(%q, %q) = %q, want %q", c.export, c.fn, got, c.want)
		}
	}
}

func TestSplitInterfaceName(t *testing.T) {
	cases := []struct{ in, ns, pkg, iface, ver string }{
		{"wasi:cli/environment@0.2.3", "wasi", "cli", "environment", "0.2.3"},
		{"test:types/shapes", "test", "types", "shapes", ""},
		{"my-iface", "", "", "my-iface", ""},
		{"wasi:http/types@0.2.0-rc.1", "wasi", "http", "types", "0.2.0-rc.1"},
	}
	for _, c := range cases {
		ns, pkg, iface, ver := SplitInterfaceName(c.in)
		if ns != c.ns || pkg != c.pkg || iface != c.iface || ver != c.ver {
			t.Errorf("SplitInterfaceName(%q) = %q %q %q %q", c.in, ns, pkg, iface, ver)
		}
	}
}

func toolByName(t *testing.T, tools []Tool, name string) *Tool {
	t.Helper()
	for i := range tools {
		if tools[i].Name == name {
			return &tools[i]
		}
	}
	t.Fatalf("no tool %q", name)
	return nil
}

func TestToolsSkipAndDocs(t *testing.T) {
	w := decodeFile(t, "testdata/types.wasm").Describe()
	tools, skipped := w.Tools()
	if len(skipped) != 2 || !strings.Contains(skipped[0].String(), "[method]blob.size") || skipped[1].Func != "make-blob" {
		t.Errorf("skipped: %v", skipped)
	}
	if got := toolByName(t, tools, "list-directory").Description; !strings.HasPrefix(got, "Lists the entries") {
		t.Errorf("list-directory description %q", got)
	}
	if got := toolByName(t, tools, "test_types_shapes_1_2_0_area").Description; got != "The area of a shape." {
		t.Errorf("area description %q", got)
	}
	if got := toolByName(t, tools, "get-time").Description; got != "Auto-generated schema for function 'get-time'" {
		t.Errorf("get-time description %q", got)
	}
	if got := toolByName(t, tools, "test_types_shapes_1_2_0_area").CallName(); got != "test:types/shapes@1.2.0#area" {
		t.Errorf("area CallName %q", got)
	}
	if got := toolByName(t, tools, "list-directory").CallName(); got != "list-directory" {
		t.Errorf("list-directory CallName %q", got)
	}
	if w.Docs != "Shapes and files." {
		t.Errorf("package docs %q", w.Docs)
	}
}

func TestToolNameCollision(t *testing.T) {
	f := &Function{Name: "a-b", Params: nil}
	w := &World{Exports: []WorldItem{
		{Name: "x", Interface: &Interface{Name: "x", Funcs: []Function{*f}}},
		{Name: "x_a-b", Func: f},
	}}
	tools, skipped := w.Tools()
	if len(tools) != 1 || tools[0].Name != "x_a-b" || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "already") {
		t.Fatalf("tools %v skipped %v", tools, skipped)
	}
}

func TestSchemaBudget(t *testing.T) {
	big := &Type{Kind: Record}
	for range 300 {
		big.Fields = append(big.Fields, Field{Name: "f", Type: Prim(String)})
	}
	var params []Field
	for range 300 {
		params = append(params, Field{Name: "p", Type: big})
	}
	w := &World{Exports: []WorldItem{{Name: "huge", Func: &Function{Name: "huge", Params: params}}}}
	tools, skipped := w.Tools()
	if len(tools) != 0 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "nodes") {
		t.Fatalf("tools %v skipped %v", tools, skipped)
	}
}

func TestDocsForms(t *testing.T) {
	v0 := []byte("\x00" + `{"worlds":{"w":{"funcs":{"f":"Doc of f."}}}}`)
	v1 := []byte("\x01" + `{"worlds":{"w":{"funcs":{"f":{"docs":"Import f.","stability":{"stable":{"since":"1.0.0"}}}},"func_exports":{"f":{"docs":"Export f."}}}}}`)
	if got := parsePackageDocs(v0).worldFunc("f", false); got != "Doc of f." {
		t.Errorf("v0: %q", got)
	}
	d := parsePackageDocs(v1)
	if got := d.worldFunc("f", false); got != "Export f." {
		t.Errorf("v1 export: %q", got)
	}
	if got := d.worldFunc("f", true); got != "Import f." {
		t.Errorf("v1 import: %q", got)
	}
	for _, bad := range [][]byte{nil, {0}, []byte("\x02{}"), []byte("\x00{"), []byte("\x00[]")} {
		if parsePackageDocs(bad) != nil {
			t.Errorf("parsePackageDocs(%q) != nil", bad)
		}
	}
}

func TestArgs(t *testing.T) {
	tools, _ := decodeFile(t, "testdata/types.wasm").Describe().Tools()
	cases := []struct {
		tool, args string
		want       []any
		errPath    string
	}{
		{"test_types_shapes_1_2_0_area", `{"s":{"tag":"circle","val":1.5}}`, []any{Case{Name: "circle", Value: 1.5}}, ""},
		{"test_types_shapes_1_2_0_area", `{"s":{"tag":"square","val":[2,3]}}`, []any{Case{Name: "square", Value: []any{2.0, 3.0}}}, ""},
		{"test_types_shapes_1_2_0_area", `{"s":{"tag":"none"}}`, []any{Case{Name: "none"}}, ""},
		{"test_types_shapes_1_2_0_area", `{"s":{"tag":"hexagon"}}`, nil, "s"},
		{"test_types_shapes_1_2_0_area", `{"s":{"tag":"square","val":[2]}}`, nil, "s.square"},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":-1,"label":"a"},"by":[{"x":2,"label":"b"}]}`,
			[]any{map[string]any{"x": int64(-1), "label": "a"}, []any{map[string]any{"x": int64(2), "label": "b"}}}, ""},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":2147483648,"label":"a"},"by":[]}`, nil, "p.x"},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":1.5,"label":"a"},"by":[]}`, nil, "p.x"},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":3.0,"label":"a"},"by":[]}`, []any{map[string]any{"x": int64(3), "label": "a"}, []any{}}, ""},
		{"test_types_shapes_1_2_0_move", `{"p":{"label":"a"},"by":[]}`, nil, "p"},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":1,"label":"a"},"by":[{"x":"1","label":"b"}]}`, nil, "by[0].x"},
		{"test_types_shapes_1_2_0_move", `{"p":{"x":1,"label":"a"}}`, nil, "by"},
		{"test_types_shapes_1_2_0_find", `{"name":"n","color":null}`, []any{"n", nil}, ""},
		{"test_types_shapes_1_2_0_find", `{"name":"n","color":"red"}`, []any{"n", Some{Value: "red"}}, ""},
		{"test_types_shapes_1_2_0_find", `{"name":"n","color":"blue"}`, nil, "color"},
		{"test_types_shapes_1_2_0_check", `{"p":["exec","read","exec"],"c":"é","n":255,"m":-9223372036854775808,"b":true,"u":18446744073709551615}`,
			[]any{[]string{"read", "exec"}, 'é', uint64(255), int64(math.MinInt64), true, uint64(math.MaxUint64)}, ""},
		{"test_types_shapes_1_2_0_check", `{"p":[],"c":"ab","n":0,"m":0,"b":true,"u":0}`, nil, "c"},
		{"test_types_shapes_1_2_0_check", `{"p":["x"],"c":"a","n":0,"m":0,"b":true,"u":0}`, nil, "p"},
		{"test_types_shapes_1_2_0_check", `{"p":[],"c":"a","n":256,"m":0,"b":true,"u":0}`, nil, "n"},
		{"test_types_shapes_1_2_0_check", `{"p":[],"c":"a","n":-1,"m":0,"b":true,"u":0}`, nil, "n"},
		{"test_types_shapes_1_2_0_check", `{"p":[],"c":"a","n":0,"m":0,"b":1,"u":0}`, nil, "b"},
		{"test_types_shapes_1_2_0_check", `{"p":[],"c":"a","n":0,"m":0,"b":true,"u":18446744073709551616}`, nil, "u"},
		{"list-directory", `{"path":"/x","extra":1}`, []any{"/x"}, ""},
		{"list-directory", `[1]`, nil, ""},
		{"get-time", ``, []any{}, ""},
	}
	for _, c := range cases {
		got, err := toolByName(t, tools, c.tool).Args([]byte(c.args))
		if c.want == nil {
			var ae *ArgError
			if !errors.As(err, &ae) || ae.Path != c.errPath {
				t.Errorf("%s %s: err %v, want an ArgError at %q", c.tool, c.args, err, c.errPath)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s %s = %#v, %v; want %#v", c.tool, c.args, got, err, c.want)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	tools, _ := decodeFile(t, "testdata/types.wasm").Describe().Tools()
	find := toolByName(t, tools, "test_types_shapes_1_2_0_find")
	for _, v := range []any{
		ResultValue{Value: map[string]any{"x": int64(5), "label": "p"}},
		ResultValue{Err: true, Value: "no such point"},
	} {
		j, err := ToJSON(find.Result, v)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(j)
		back, err := decodeJSON(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := FromJSON(find.Result, back, "r")
		if err != nil || !reflect.DeepEqual(got, v) {
			t.Errorf("round trip of %#v: %#v, %v", v, got, err)
		}
	}
}

func TestOutput(t *testing.T) {
	tools, _ := decodeFile(t, "testdata/types.wasm").Describe().Tools()
	cases := []struct {
		tool     string
		v        any
		text, st string
		isError  bool
	}{
		{"list-directory", ResultValue{Value: []any{"a", "b"}}, `{"ok":["a","b"]}`, `{"result":{"ok":["a","b"]}}`, false},
		{"list-directory", ResultValue{Err: true, Value: "denied"}, "denied", `{"result":{"err":"denied"}}`, true},
		{"test_types_shapes_1_2_0_area", math.Inf(1), "inf", `{"result":"inf"}`, false},
		{"test_types_shapes_1_2_0_area", 2.5, `2.5`, `{"result":2.5}`, false},
		{"get-time", []any{uint64(1), uint64(2)}, `[1,2]`, `{"result":[1,2]}`, false},
		{"test_types_shapes_1_2_0_check", nil, "", "", false},
	}
	for _, c := range cases {
		out, err := toolByName(t, tools, c.tool).Output(c.v)
		if err != nil || out.Text != c.text || string(out.Structured) != c.st || out.IsError != c.isError {
			t.Errorf("%s %v: %+v (%s), %v", c.tool, c.v, out, out.Structured, err)
		}
	}
	if _, err := toolByName(t, tools, "get-time").Output("not a tuple"); err == nil {
		t.Error("a string as a tuple converted")
	}
}

func FuzzArgs(f *testing.F) {
	tools, _ := decodeFile(f, "testdata/types.wasm").Describe().Tools()
	f.Add(0, []byte(`{"s":{"tag":"circle","val":1.5}}`))
	f.Add(1, []byte(`{"p":{"x":-1,"label":"a"},"by":[{"x":2,"label":"b"}]}`))
	f.Add(3, []byte(`{"p":["read"],"c":"é","n":255,"m":-1,"b":true,"u":1}`))
	f.Fuzz(func(t *testing.T, i int, raw []byte) {
		if i < 0 {
			i = -i
		}
		tool := &tools[i%len(tools)]
		args, err := tool.Args(raw)
		if err != nil {
			var ae *ArgError
			if !errors.As(err, &ae) {
				t.Fatalf("not an ArgError: %v", err)
			}
			return
		}
		// What was accepted converts back to JSON and is accepted again.
		for j, p := range tool.Params {
			v, err := ToJSON(p.Type, args[j])
			if err != nil {
				t.Fatalf("ToJSON of an accepted argument: %v", err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeJSON(b)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := FromJSON(p.Type, back, p.Name); err != nil {
				t.Fatalf("re-reading %s: %v", b, err)
			}
		}
	})
}

func FuzzDescribe(f *testing.F) {
	c := decodeFile(f, "testdata/types.wasm")
	f.Add(c.Docs())
	f.Fuzz(func(t *testing.T, docs []byte) {
		cc := *c
		cc.Custom = []CustomSection{{Name: "package-docs", Data: docs}}
		w := cc.Describe()
		_ = w.String()
		w.Tools()
	})
}

// FuzzDescribeBinary: whatever the decoder accepts, the WIT view, its
// text and the tool mapping never panic, and every tool's schemas are
// JSON.
func FuzzDescribeBinary(f *testing.F) {
	for _, p := range []string{"testdata/echo.wasm", "testdata/types.wasm"} {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := Decode(b)
		if err != nil {
			return
		}
		w := c.Describe()
		_ = w.String()
		tools, _ := w.Tools()
		for _, tool := range tools {
			if !json.Valid(tool.InputSchema) || (tool.OutputSchema != nil && !json.Valid(tool.OutputSchema)) {
				t.Fatalf("%s: schemas not JSON", tool.Name)
			}
			_, _ = tool.Args([]byte(`{}`))
		}
	})
}

// TestToolsNested: an interface exported as the instance of a nested
// component (as wit-component builds it) gives its functions' tools, named
// by the export's name as Wassette names them.
func TestToolsNested(t *testing.T) {
	tools, skipped := decodeFile(t, "testdata/nested.wasm").Describe().Tools()
	var names []string
	for _, tool := range tools {
		names = append(names, tool.Name+"="+tool.CallName())
	}
	want := []string{"ping=ping", "tools_sum=tools#sum", "tools_pick=tools#pick",
		"my_pkg_tools_1_0_0_sum=my:pkg/tools@1.0.0#sum", "my_pkg_tools_1_0_0_pick=my:pkg/tools@1.0.0#pick"}
	if !reflect.DeepEqual(names, want) || len(skipped) != 0 {
		t.Errorf("tools %v skipped %v, want %v", names, skipped, want)
	}
}
