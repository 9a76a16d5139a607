package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// Objects are written loose as git writes them (zlib at best speed, read
// only) and read back by git; a tree read twice is the same, whatever the
// first reader did to its copy.
func TestObjectsAreWrittenAsGitWritesThem(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	data := []byte(strings.Repeat("the billing worker retries with backoff\n", 200))
	c, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", data}, {"entries/bb/b.json", []byte("b")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	blob := testrepo.Git(t, dir, "rev-parse", c.String()+":entries/aa/a.json")
	path := filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("the blob is not loose: %v", err)
	}
	if fi.Mode().Perm()&0o222 != 0 {
		t.Errorf("loose object mode %v: git writes them read-only", fi.Mode())
	}
	raw, _ := os.ReadFile(path)
	if len(raw) < 2 || raw[0] != 0x78 || raw[1] != 0x01 { // zlib header: best speed
		t.Errorf("loose object header % x, want 78 01 (zlib at best speed, git's core.looseCompression)", raw[:min(2, len(raw))])
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	if want := append([]byte("blob 8000\x00"), data...); !bytes.Equal(got, want) {
		t.Errorf("loose object holds %d bytes, want the header and the data (%d)", len(got), len(want))
	}
	if out := testrepo.Git(t, dir, "cat-file", "-p", blob); out != strings.TrimSuffix(string(data), "\n") {
		t.Errorf("git reads back %d bytes", len(out))
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")

	// writing it again freshens it (git gc judges age by it)
	old := time.Now().Add(-30 * 24 * time.Hour)
	os.Chtimes(path, old, old)
	if _, err := r.WriteBlob(data); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(path); time.Since(fi.ModTime()) > time.Hour {
		t.Errorf("an object written again kept its old time %v", fi.ModTime())
	}

	tree, err := r.CommitTree(c)
	if err != nil {
		t.Fatal(err)
	}
	first, err := r.readTree(tree)
	if err != nil || len(first) != 1 {
		t.Fatalf("root tree: %v %v", first, err)
	}
	first[0].Name = "changed by a caller"
	if again, _ := r.readTree(tree); again[0].Name != "entries" {
		t.Fatalf("a caller's change to a tree read reached the next read: %q", again[0].Name)
	}
}
