package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	wasmcp "github.com/wasmcp/wasmcp/sdk/go"
	"github.com/wasmcp/wasmcp/sdk/go/wasmcptest"
)

// TestManifest checks the app resource, the tools' links to it and the
// embedded skill as the host receives them.
func TestManifest(t *testing.T) {
	m, err := wasmcptest.NewSession(plugin, wasmcptest.NewHost()).Describe()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Resources) != 1 || m.Resources[0].URI != appURI || m.Resources[0].MIMEType != wasmcp.AppMIMEType {
		t.Fatalf("resources = %+v", m.Resources)
	}
	ui, _ := m.Resources[0].Meta["ui"].(map[string]any)
	csp, _ := ui["csp"].(map[string]any)
	if csp == nil || ui["prefersBorder"] != true {
		t.Fatalf("resource _meta = %v", m.Resources[0].Meta)
	}
	tests := []struct {
		tool       string
		visibility any
	}{
		{"service_metrics", nil},
		{"metrics_page", []any{"app"}},
	}
	for _, tt := range tests {
		mt := m.Tool(tt.tool)
		if mt == nil {
			t.Fatalf("no tool %s", tt.tool)
		}
		ui, _ := mt.Meta["ui"].(map[string]any)
		if ui["resourceUri"] != appURI || !reflect.DeepEqual(ui["visibility"], tt.visibility) {
			t.Errorf("%s _meta = %v", tt.tool, mt.Meta)
		}
	}
	if len(m.Skills) != 1 || !strings.Contains(m.Skills[0].Files["SKILL.md"], "name: reading-metrics") {
		t.Errorf("skills = %+v", m.Skills)
	}
}

// TestApp reads the app: the HTML and its _meta.ui.
func TestApp(t *testing.T) {
	rc, err := wasmcptest.NewSession(plugin, wasmcptest.NewHost()).ReadResource(appURI)
	if err != nil {
		t.Fatal(err)
	}
	if len(rc) != 1 || rc[0].MIMEType != wasmcp.AppMIMEType || !strings.HasPrefix(rc[0].Text, "<!DOCTYPE html>") || rc[0].Meta["ui"] == nil {
		t.Fatalf("contents = %+v", rc)
	}
	for _, want := range []string{`"ui/initialize"`, `"ui/notifications/initialized"`, `prefix + "metrics_page"`, `wasmcp-tool-prefix`} {
		if !strings.Contains(rc[0].Text, want) {
			t.Errorf("app lacks %s", want)
		}
	}
}

// TestMetrics calls both tools: a text table for every client, the same
// rows as structured content, pages clamped, samples deterministic.
func TestMetrics(t *testing.T) {
	tests := []struct {
		name      string
		args      map[string]any
		page, n   int
		firstName string
	}{
		{"first page", map[string]any{}, 1, 5, "api-gateway"},
		{"second page", map[string]any{"page": 2}, 2, 5, "email"},
		{"last page, clamped", map[string]any{"page": 99}, 3, 4, "recommendations"},
		{"page size", map[string]any{"page_size": 14}, 1, 14, "api-gateway"},
	}
	s := wasmcptest.NewSession(plugin, wasmcptest.NewHost())
	for _, tool := range []string{"service_metrics", "metrics_page"} {
		for _, tt := range tests {
			r, err := s.CallTool(tool, tt.args)
			if err != nil || r.IsError {
				t.Fatalf("%s %s: %v %+v", tool, tt.name, err, r)
			}
			var m Metrics
			if err := json.Unmarshal(r.StructuredContent.(json.RawMessage), &m); err != nil {
				t.Fatal(err)
			}
			if m.Page != tt.page || len(m.Rows) != tt.n || m.Rows[0].Service != tt.firstName {
				t.Errorf("%s %s: %+v", tool, tt.name, m)
			}
			if len(r.Content) != 1 || !strings.Contains(r.Content[0].Text, tt.firstName) || !strings.HasPrefix(r.Content[0].Text, "Service metrics, page") {
				t.Errorf("%s %s: text fallback %+v", tool, tt.name, r.Content)
			}
		}
	}
	if a, b := sample(1, 5, 1), sample(1, 5, 1); !reflect.DeepEqual(a, b) {
		t.Error("a sample is not deterministic")
	}
	if a, b := sample(1, 5, 1), sample(1, 5, 2); reflect.DeepEqual(a.Rows, b.Rows) {
		t.Error("another seed gives the same sample")
	}
}
