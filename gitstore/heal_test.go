package gitstore

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// TestGCRunningAsGitReadsIt checks gc.pid as git reads it: a gc of this
// host runs while its process does, one of another host is taken as
// running, and a file older than 12 hours, one git did not write, or
// none, is no gc.
func TestGCRunningAsGitReadsIt(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "gc.pid")
	if gcRunning(path) {
		t.Error("no gc.pid: a gc is running")
	}
	for _, c := range []struct {
		content string
		old     bool
		want    bool
	}{
		{fmt.Sprintf("%d %s", os.Getpid(), host), false, true},
		{fmt.Sprintf("%d %s", dead.Process.Pid, host), false, false},
		{fmt.Sprintf("%d %s", dead.Process.Pid, "another-host.example"), false, true},
		{fmt.Sprintf("%d %s", os.Getpid(), host), true, false},
		{"", false, false},        // not git's: no gc
		{"garbage", false, false}, // nor this
	} {
		if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.old {
			then := time.Now().Add(-13 * time.Hour)
			os.Chtimes(path, then, then)
		}
		if got := gcRunning(path); got != c.want {
			t.Errorf("gc.pid %q (older than 12 h: %v): running %v, want %v", c.content, c.old, got, c.want)
		}
	}
}

// TestAwaitGCWaitsForTheWholeGC checks that a write waits for a gc
// however long it runs, and no longer: until its process ends, or the
// write's context does.
func TestAwaitGCWaitsForTheWholeGC(t *testing.T) {
	dir := t.TempDir()
	r := &Repo{commonDir: dir}
	ended := testrepo.RunningGC(t, dir, 1500*time.Millisecond)
	told := 0
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r.awaitGC(WithGCNotice(ctx, func() { told++ }))
	if ctx.Err() != nil {
		t.Fatal("awaitGC waited on after the gc's process had ended")
	}
	if told != 1 {
		t.Errorf("a write waiting 1.5 s for a gc told so %d times, want once", told)
	}
	done := time.Now()
	select {
	case end := <-ended:
		if late := done.Sub(end); late > time.Second {
			t.Errorf("awaitGC returned %v after the gc ended", late)
		}
	default:
		t.Fatal("awaitGC returned while the gc ran")
	}
	// a gc that does not end: the write's context does
	host, _ := os.Hostname()
	os.WriteFile(filepath.Join(dir, "gc.pid"), []byte(fmt.Sprintf("%d %s", os.Getpid(), host)), 0o644)
	ctx, cancel = context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	r.awaitGC(ctx)
	if took := time.Since(start); took < 150*time.Millisecond || took > 5*time.Second {
		t.Errorf("awaitGC beside a gc that runs on returned after %v, want about its context's 200ms", took)
	}
}

// TestHealWaitsForTheParentItsWriterHeals checks two writes that one git
// gc --prune=now took both: the later one is written onto the earlier,
// which only the earlier's process writes again. The later one's heal
// waits for that instead of failing at once.
func TestHealWaitsForTheParentItsWriterHeals(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	const ref = "refs/synaptic/memory"
	sig := Signature{Name: "Ann", Email: "ann@example.com", When: time.Unix(1_700_000_000, 0)}
	base, _, err := r.Append(ctx, ref, []File{{Path: "entries/00/base", Data: []byte("kept")}}, sig, "base")
	if err != nil {
		t.Fatal(err)
	}
	filesA := []File{{Path: "entries/0a/a", Data: []byte("the earlier write")}}
	filesB := []File{{Path: "entries/0b/b", Data: []byte("the later write")}}
	a, _, err := r.Append(ctx, ref, filesA, sig, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := r.Append(ctx, ref, filesB, sig, "b")
	if err != nil {
		t.Fatal(err)
	}
	// what the prune took: every object of the two writes, loose
	out := testrepo.Git(t, dir, "rev-list", "--objects", b.String(), "^"+base.String())
	pruned := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		h := strings.Fields(line)[0]
		if err := os.Remove(filepath.Join(dir, ".git", "objects", h[:2], h[2:])); err != nil {
			t.Fatal(err)
		}
		pruned++
	}
	if pruned < 6 { // two commits, their root trees and subtrees, two blobs
		t.Fatalf("pruned %d objects, want every one of both writes", pruned)
	}
	// each write's process, after the gc
	rA, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	rB, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	healed := make(chan error, 1)
	go func() { healed <- rB.heal(ctx, b, a, filesB, sig, "b") }()
	time.Sleep(time.Second)
	if err := rA.heal(ctx, a, base, filesA, sig, "a"); err != nil {
		t.Fatalf("the earlier write's heal: %v", err)
	}
	if err := <-healed; err != nil {
		t.Fatalf("the later write's heal, its parent written again a second on: %v", err)
	}
	if out := testrepo.Git(t, dir, "fsck", "--connectivity-only", "--no-dangling", "--no-progress"); strings.TrimSpace(out) != "" {
		t.Fatalf("git fsck: %s", out)
	}
	if got := testrepo.Git(t, dir, "cat-file", "-p", b.String()+":entries/0a/a"); got != "the earlier write" {
		t.Fatalf("the earlier write under the later: %q", got)
	}
}
