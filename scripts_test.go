package wasmcp_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildScriptsHelp: every script that builds committed .wasm files
// prints its usage for -h however it is invoked (from the repository root
// or from its own directory), and exits as its usage says: 0 for the
// scripts that take directories, 2 for the corpora that take only --check.
func TestBuildScriptsHelp(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	for _, tc := range []struct {
		script string
		first  string // the usage's first line starts so
		code   int
	}{
		{"examples/build.sh", "# Builds every Go example plugin", 0},
		{"scripts/build-sdk-examples.sh", "# Builds every example plugin", 0},
		{"testdata/hostile/build.sh", "#", 2},
		{"testdata/extism/build.sh", "#", 2},
		{"testdata/components/build.sh", "# Builds the component corpus", 2},
		{"bench/plugins/build.sh", "# Builds the benchmark plugins", 2},
	} {
		for _, from := range []string{".", filepath.Dir(tc.script)} {
			rel, err := filepath.Rel(from, tc.script)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("bash", "./"+rel, "-h")
			cmd.Dir = from
			out, err := cmd.CombinedOutput()
			if cmd.ProcessState == nil {
				t.Fatal(err) // bash did not start
			}
			code := cmd.ProcessState.ExitCode()
			if code != tc.code || !strings.HasPrefix(string(out), tc.first) {
				t.Errorf("in %s, %s -h: exit %d (want %d), output:\n%s", from, rel, code, tc.code, out)
			}
		}
	}
}
