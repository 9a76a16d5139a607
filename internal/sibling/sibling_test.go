package sibling

import (
	"os"
	"path/filepath"
	"testing"
)

// A program beside the running one is found there; one that is not, on
// PATH; a file there that cannot run, or a directory, is passed over.
func TestPathBesideThenOnPath(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(self) // the test binary's own, made for this run
	beside := filepath.Join(dir, "sibling-beside")
	if err := os.WriteFile(beside, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(beside)
	if got, err := Path("sibling-beside"); err != nil || got != beside {
		t.Errorf("beside: %q, %v; want %q", got, err, beside)
	}
	onPath := t.TempDir()
	t.Setenv("PATH", onPath)
	for _, name := range []string{"sibling-elsewhere", "sibling-mode", "sibling-dir"} {
		if err := os.WriteFile(filepath.Join(onPath, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "sibling-mode"), []byte("not a program"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(dir, "sibling-mode"))
	if err := os.Mkdir(filepath.Join(dir, "sibling-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(filepath.Join(dir, "sibling-dir"))
	for _, name := range []string{"sibling-elsewhere", "sibling-mode", "sibling-dir"} {
		if got, err := Path(name); err != nil || got != filepath.Join(onPath, name) {
			t.Errorf("%s: %q, %v; want the one on PATH", name, got, err)
		}
	}
	if got, err := Path("sibling-nowhere"); err == nil {
		t.Errorf("a program nowhere found at %q", got)
	}
}
