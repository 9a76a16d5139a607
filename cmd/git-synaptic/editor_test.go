package main_test

import (
	"os"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// edit with no change asked for opens the editor git would open in the
// repository named by -C (its core.editor), not in the directory the
// command was started from.
func TestEditOpensTheRepositorysEditor(t *testing.T) {
	for _, v := range []string{"GIT_EDITOR", "VISUAL", "EDITOR"} {
		if old, had := os.LookupEnv(v); had {
			os.Unsetenv(v)
			t.Cleanup(func() { os.Setenv(v, old) })
		}
	}
	dir := testrepo.NewRepo(t)
	id := save(t, dir, "the build uses make")
	testrepo.Git(t, dir, "config", "core.editor", "sed -i s/make/ninja/")
	elsewhere := t.TempDir()
	if r := run(t, elsewhere, "", "-C", dir, "edit", id[:8]); r.code != 0 {
		t.Fatalf("edit in the editor: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if out := ok(t, dir, "show", id[:8]); !strings.Contains(out, "the build uses ninja") {
		t.Fatalf("the editor's change was not saved:\n%s", out)
	}
}
