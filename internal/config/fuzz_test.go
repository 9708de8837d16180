package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse checks that Parse, Validate and the key locator never panic
// or hang, and that a parsed configuration always marshals. The seed
// corpus is every golden input plus testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/golden/*.toml")
	for _, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		locateKeys(data)
		c, err := Parse(data, "/base")
		if err != nil {
			return
		}
		_ = c.Validate()
		if _, err := json.Marshal(c); err != nil {
			t.Fatalf("marshal parsed config: %v", err)
		}
	})
}
