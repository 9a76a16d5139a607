package history

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cochange"
)

// A snapshot write removes what killed writers left behind, and only that.
func TestWriteSnapshotRemovesStaleTemporaries(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cochange.model")
	stale, fresh := path+".123.tmp", path+".456.tmp"
	for _, f := range []string{stale, fresh} {
		if err := os.WriteFile(f, []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(stale, old, old)
	m := cochange.New(cochange.Options{})
	m.Learn(cochange.Commit{Time: time.Unix(1700000000, 0), Files: []string{"a", "b"}})
	if err := writeSnapshot(path, "key", "state", m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Fatalf("stale temporary left: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("a live writer's temporary removed: %v", err)
	}
	got, state := loadSnapshot(path, "key")
	if got == nil || state != "state" || got.Commits() != 1 {
		t.Fatalf("snapshot read back: %v %q", got, state)
	}
}
