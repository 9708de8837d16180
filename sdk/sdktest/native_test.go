package sdktest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCJSONNative builds sdk/c/test/json_test.c natively with AddressSanitizer
// and UndefinedBehaviorSanitizer and runs it: conformance tables, writer
// round trips and a mutation fuzz loop over the C SDK's JSON reader.
func TestCJSONNative(t *testing.T) {
	clang, err := exec.LookPath("clang")
	if err != nil {
		missingToolchain(t, "C toolchain missing: clang not on PATH")
	}
	dir := t.TempDir()
	flags := []string{"-std=c11", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"}
	probe := filepath.Join(dir, "probe.c")
	if err := os.WriteFile(probe, []byte("int main(void){return 0;}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(clang, append(flags, "-o", filepath.Join(dir, "probe"), probe)...).CombinedOutput(); err != nil {
		t.Skipf("clang cannot build with sanitizers here: %s", strings.TrimSpace(string(out)))
	}
	bin := filepath.Join(dir, "json_test")
	args := append(flags, "-Wall", "-Wextra", "-Werror", "-o", bin, "../c/test/json_test.c", "-lm")
	if out, err := exec.Command(clang, args...).CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS") {
		t.Fatalf("json_test: %v\n%s", err, out)
	}
}

// TestRustSDKNative runs the Rust SDK's unit tests (JSON, base64, URI
// templates) natively.
func TestRustSDKNative(t *testing.T) {
	rustc := "/usr/bin/rustc"
	if _, err := os.Stat(rustc); err != nil {
		if rustc, err = exec.LookPath("rustc"); err != nil {
			missingToolchain(t, "Rust toolchain missing: rustc not found")
		}
	}
	bin := filepath.Join(t.TempDir(), "wasmcp_test")
	if out, err := exec.Command(rustc, "--edition", "2021", "--test", "-o", bin, "../rust/wasmcp.rs").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "test result: ok") {
		t.Fatalf("tests: %v\n%s", err, out)
	}
}

// missingToolchain skips t, or fails it when WASMCP_REQUIRE_TOOLCHAINS is
// set (scripts/test.sh sets it after installing the toolchains, so that a
// missing install step cannot pass as a skip).
func missingToolchain(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("WASMCP_REQUIRE_TOOLCHAINS") != "" {
		t.Fatalf(format+" (WASMCP_REQUIRE_TOOLCHAINS is set)", args...)
	}
	t.Skipf(format, args...)
}
