package runtime

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wasmcp/wasmcp/runtime/internal/instrument"
)

// TestDefaultModuleLimitsAdmitRepoModules: every module in the repository
// that instruments without limits (examples, conformance and SDK plugins,
// fixtures) also does under DefaultModuleLimits, except the hostile
// fixtures made to exceed them.
func TestDefaultModuleLimitsAdmitRepoModules(t *testing.T) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("git: %v", err)
	}
	root := strings.TrimSpace(string(out))
	out, err = exec.Command("git", "-C", root, "ls-files", "*.wasm").Output()
	if err != nil {
		t.Fatal(err)
	}
	over := map[string]bool{"testdata/hostile/nested.wasm": true}
	lim := DefaultModuleLimits()
	n := 0
	for _, f := range strings.Fields(string(out)) {
		wasm, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := instrument.Instrument(wasm, instrument.Limits{}); err != nil {
			continue // not instrumentable at all (invalid, reserved names, no memory)
		}
		_, _, err = instrument.Instrument(wasm, lim)
		var le *instrument.LimitError
		switch {
		case over[f] && !errors.As(err, &le):
			t.Errorf("%s: %v, want a limit error", f, err)
		case !over[f] && err != nil:
			t.Errorf("%s: refused under the default limits: %v", f, err)
		}
		n++
	}
	if n < 10 {
		t.Errorf("only %d modules checked", n)
	}
}
