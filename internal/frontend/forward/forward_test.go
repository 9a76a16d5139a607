package forward

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// git-synaptic-core is found beside this program, else on PATH, through
// its links (the warm process is named by the file it runs from); absent,
// the error says how to mend the install.
func TestCore(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(self), CoreProgram)); err == nil {
		t.Fatalf("a %s beside the test binary", CoreProgram)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := Core(); err == nil || !strings.Contains(err.Error(), "make install") {
		t.Errorf("no core: %v", err)
	}
	dir, real := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(real, "core"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(real, "core"), filepath.Join(dir, CoreProgram)); err != nil {
		t.Fatal(err)
	}
	bad := t.TempDir() // first on PATH, not executable: passed over
	if err := os.WriteFile(filepath.Join(bad, CoreProgram), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bad+string(os.PathListSeparator)+dir)
	want, _ := filepath.EvalSymlinks(filepath.Join(real, "core"))
	if got, err := Core(); err != nil || got != want {
		t.Errorf("on PATH: %q %v, want %q", got, err, want)
	}
}

// What may go to the warm process, and what never does.
func TestCandidate(t *testing.T) {
	for args, want := range map[string]bool{
		"search x": true, "save x": true, "save": true, "hook prompt": true, "hook post-commit": true,
		"hook tool": true, "hook": false, "list": false, "": false, "mcp": false, "daemon run": false,
	} {
		if got := Candidate(strings.Fields(args)); got != want {
			t.Errorf("%q: %v", args, got)
		}
	}
	for args, want := range map[string]bool{"hook post-commit": true, "hook post-merge": true, "hook post-rewrite": false, "hook prompt": false} {
		if got := GitHandoff(strings.Fields(args)); got != want {
			t.Errorf("handoff %q: %v", args, got)
		}
	}
}

// A file this process inherited is marked close-on-exec while the warm
// process starts, and unmarked after, for the command run in place.
func TestInheritOnlyStdioRestores(t *testing.T) {
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil { // (not close-on-exec, as a file git passes)
		t.Fatal(err)
	}
	defer syscall.Close(p[0])
	defer syscall.Close(p[1])
	cloexec := func(fd int) bool {
		flags, _, errno := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		return flags&syscall.FD_CLOEXEC != 0
	}
	if cloexec(p[0]) {
		t.Fatal("a new pipe is already close-on-exec")
	}
	own, err := os.Open(os.DevNull) // Go's own files are close-on-exec
	if err != nil {
		t.Fatal(err)
	}
	defer own.Close()
	restore := InheritOnlyStdio()
	if !cloexec(p[0]) || !cloexec(p[1]) {
		t.Error("an inherited file is not close-on-exec while the warm process starts")
	}
	restore()
	if cloexec(p[0]) || cloexec(p[1]) {
		t.Error("an inherited file stays close-on-exec for the command run in place")
	}
	if !cloexec(int(own.Fd())) {
		t.Error("restore unmarked a file that was close-on-exec before")
	}
}
