package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// A lock file beside a ref (git's own, another git-synaptic's, or one a
// killed process left empty) is not a ref: listing and reading go on.
func TestLockFilesAreNotRefs(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	c, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", []byte("a")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	gitDir := filepath.Join(dir, ".git")
	for _, lock := range []string{"refs/synaptic/memory.lock", "refs/synaptic/other.lock", "refs/notes/synaptic.lock", "refs/remotes/origin/main.lock"} {
		p := filepath.Join(gitDir, lock)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refs, err := r.Refs("refs/synaptic/", "refs/notes/synaptic", "refs/remotes/")
	if err != nil {
		t.Fatalf("Refs with lock files present: %v", err)
	}
	if len(refs) != 1 || refs["refs/synaptic/memory"] != c {
		t.Fatalf("Refs = %v, want only refs/synaptic/memory at %s", refs, c)
	}
	if tip, err := r.Tip("refs/synaptic/memory"); err != nil || tip != c {
		t.Fatalf("Tip = %s, %v", tip, err)
	}
	// Young locks may belong to a live process: left alone, and a write
	// waits for them.
	if got := r.StaleLocks("refs/synaptic/", "refs/notes/synaptic"); len(got) != 0 {
		t.Fatalf("fresh locks reported stale: %v", got)
	}
	old := time.Now().Add(-time.Minute)
	for _, lock := range []string{"refs/synaptic/memory.lock", "refs/synaptic/other.lock", "refs/notes/synaptic.lock"} {
		os.Chtimes(filepath.Join(gitDir, lock), old, old)
	}
	removed := r.RemoveStaleLocks("refs/synaptic/", "refs/notes/synaptic")
	if len(removed) != 3 {
		t.Fatalf("removed %v, want the three stale memory locks", removed)
	}
	if _, err := os.Stat(filepath.Join(gitDir, "refs/remotes/origin/main.lock")); err != nil {
		t.Fatalf("a lock outside the memory refs was touched: %v", err)
	}
	if _, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/bb/b.json", []byte("b")}}, sig, "two"); err != nil {
		t.Fatalf("append after the stale lock was removed: %v", err)
	}
}

// Refs packed by git pack-refs (as git gc does) read as before, and a loose
// ref written later wins over its packed value.
func TestPackedRefs(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	c1, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", []byte("a")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Append(ctx, "refs/synaptic-local/memory", []File{{"entries/aa/p.json", []byte("p")}}, sig, "p"); err != nil {
		t.Fatal(err)
	}
	testrepo.Git(t, dir, "pack-refs", "--all")
	if _, err := os.Stat(filepath.Join(dir, ".git/refs/synaptic/memory")); !os.IsNotExist(err) {
		t.Fatalf("pack-refs left the loose ref: %v", err)
	}
	refs, err := r.Refs("refs/synaptic/", "refs/synaptic-local/")
	if err != nil || len(refs) != 2 || refs["refs/synaptic/memory"] != c1 {
		t.Fatalf("packed Refs = %v, %v", refs, err)
	}
	c2, parent, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/bb/b.json", []byte("b")}}, sig, "two")
	if err != nil || parent != c1 {
		t.Fatalf("append onto a packed ref: parent %s, %v", parent, err)
	}
	if tip, _ := r.Tip("refs/synaptic/memory"); tip != c2 {
		t.Fatalf("Tip = %s, want the loose %s", tip, c2)
	}
	if got := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory"); got != c2.String() {
		t.Fatalf("git sees %s, want %s", got, c2)
	}
}

// One open Repo (as in the MCP server) keeps writing and reading while git
// gc and git repack -a -d move every object into new packs and delete the
// old ones.
func TestOneRepoSurvivesGCAndRepack(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	defer r.Close()
	var tip Hash
	for i := 0; i < 6; i++ {
		c, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{fmt.Sprintf("entries/%02x/e%d.json", i, i), []byte(fmt.Sprint(i))}}, sig, "e")
		if err != nil {
			t.Fatalf("append %d after maintenance: %v", i, err)
		}
		if _, err := r.Diff(tip, c); err != nil {
			t.Fatalf("diff %d after maintenance: %v", i, err)
		}
		tip = c
		if i%2 == 0 {
			testrepo.Git(t, dir, "gc", "-q")
		} else {
			testrepo.Git(t, dir, "repack", "-a", "-d", "-q")
		}
	}
	n, err := r.CountFiles(tip, "entries")
	if err != nil || n != 6 {
		t.Fatalf("CountFiles = %d, %v; want 6", n, err)
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")
}

// A batch big enough to be written as a pack survives a repack that runs
// before the ref points at it: the pack is kept until then.
func TestBatchPackIsKeptUntilReferenced(t *testing.T) {
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	var files []File
	for i := 0; i < packThreshold+10; i++ {
		files = append(files, File{fmt.Sprintf("entries/%02x/x%d.json", i%256, i), []byte(fmt.Sprintf("entry %d", i))})
	}
	blobs, release, err := r.writeBlobs(files)
	if err != nil {
		t.Fatal(err)
	}
	testrepo.Git(t, dir, "repack", "-a", "-d", "-q") // nothing references the blobs yet
	for p, h := range blobs {
		if !r.HasObject(h) {
			t.Fatalf("repack dropped %s of an unreferenced batch", p)
		}
	}
	release()
	keeps, _ := filepath.Glob(filepath.Join(dir, ".git/objects/pack/*.keep"))
	if len(keeps) != 0 {
		t.Fatalf("keep files left after release: %v", keeps)
	}
}
