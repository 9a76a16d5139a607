package registry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAddRemoveConcurrently(t *testing.T) {
	f := Open(filepath.Join(t.TempDir(), "sub", "projects.json"))
	if ps, err := f.List(); err != nil || len(ps) != 0 {
		t.Fatalf("a missing file is not an empty list: %v %v", ps, err)
	}
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.Add(fmt.Sprintf("/repos/p%02d", i), time.Now()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	ps, err := f.List()
	if err != nil || len(ps) != 20 || ps[0].Path != "/repos/p00" {
		t.Fatalf("20 concurrent adds left %d projects (%v)", len(ps), err)
	}
	if added, _ := f.Add("/repos/p03", time.Now()); added {
		t.Error("a second add of one path says it was new")
	}
	if removed, _ := f.Remove("/repos/p03"); !removed {
		t.Error("remove says p03 was not registered")
	}
	if removed, _ := f.Remove("/repos/p03"); removed {
		t.Error("a second remove says p03 was registered")
	}
	if ps, _ := f.List(); len(ps) != 19 {
		t.Errorf("%d projects after one removal", len(ps))
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(f.Path()), ".projects-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

func TestBrokenFileIsAClearError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "projects.json")
	os.WriteFile(path, []byte("{not json"), 0o600)
	f := Open(path)
	if _, err := f.List(); err == nil || !strings.Contains(err.Error(), "is not a project list") {
		t.Errorf("List: %v", err)
	}
	if _, err := f.Add("/x", time.Now()); err == nil {
		t.Error("Add overwrote a file it could not read")
	}
	if b, _ := os.ReadFile(path); string(b) != "{not json" {
		t.Errorf("the broken file was changed: %q", b)
	}
}

func TestDefaultPathFollowsXDG(t *testing.T) {
	t.Setenv("XDG_DATA_HOME", "/data")
	if p, _ := DefaultPath(); p != "/data/git-synaptic/projects.json" {
		t.Errorf("XDG_DATA_HOME: %s", p)
	}
	t.Setenv("XDG_DATA_HOME", "relative") // the XDG spec says to ignore it
	t.Setenv("HOME", "/home/u")
	if p, _ := DefaultPath(); p != "/home/u/.local/share/git-synaptic/projects.json" {
		t.Errorf("no XDG_DATA_HOME: %s", p)
	}
}
