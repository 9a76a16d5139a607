package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// history reads dir's whole history.
func history(t *testing.T, dir string) ([]Commit, int) {
	t.Helper()
	var out []Commit
	exact, err := open(t, dir).History(context.Background(), LogOptions{}, func(c Commit) error {
		out = append(out, c)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out, exact
}

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// History follows renames, exact ones by blob id even where the contents
// git's rename detection compares are missing, and marks deleted files.
func TestHistoryRenamesAndMissingBlobs(t *testing.T) {
	dir := testrepo.NewRepo(t)
	long := strings.Repeat("a line that makes the file long enough to compare\n", 20)
	write(t, dir, "a.txt", "alpha\n"+long)
	write(t, dir, "b.txt", "beta\n"+long)
	testrepo.Git(t, dir, "add", ".")
	testrepo.Git(t, dir, "commit", "-q", "-m", "add a and b")
	os.Mkdir(filepath.Join(dir, "dir"), 0o755)
	testrepo.Git(t, dir, "mv", "a.txt", "dir/a.txt")
	testrepo.Git(t, dir, "commit", "-q", "-m", "move a exactly")
	testrepo.Git(t, dir, "mv", "b.txt", "c.txt")
	write(t, dir, "c.txt", "beta, edited\n"+long)
	testrepo.Git(t, dir, "add", ".")
	testrepo.Git(t, dir, "commit", "-q", "-m", "move b and edit it")
	testrepo.Git(t, dir, "rm", "-q", "README")
	testrepo.Git(t, dir, "commit", "-q", "-m", "drop the readme")
	testrepo.Git(t, dir, "mv", "c.txt", "d.txt")
	write(t, dir, "d.txt", "beta, edited again\n"+long)
	testrepo.Git(t, dir, "add", ".")
	testrepo.Git(t, dir, "commit", "-q", "-m", "move c and edit it")

	check := func(cs []Commit, editedRename bool) {
		t.Helper()
		if len(cs) != 6 || cs[0].Message != "initial" || cs[4].Message != "drop the readme" {
			t.Fatalf("commits: %+v", cs)
		}
		if f := cs[2].Files; len(f) != 1 || f[0] != (FileChange{Path: "dir/a.txt", OldPath: "a.txt"}) {
			t.Fatalf("exact rename: %+v", f)
		}
		f := cs[3].Files
		if editedRename && (len(f) != 1 || f[0] != (FileChange{Path: "c.txt", OldPath: "b.txt"})) {
			t.Fatalf("rename with edits: %+v", f)
		}
		if !editedRename && (len(f) != 2 || f[0] != (FileChange{Path: "b.txt", Deleted: true}) || f[1] != (FileChange{Path: "c.txt"})) {
			t.Fatalf("rename with edits, contents missing: %+v", f)
		}
		if f := cs[4].Files; len(f) != 1 || f[0] != (FileChange{Path: "README", Deleted: true}) {
			t.Fatalf("deletion: %+v", f)
		}
		// Renames after a commit whose contents are missing are still
		// found by content.
		if f := cs[5].Files; len(f) != 1 || f[0] != (FileChange{Path: "d.txt", OldPath: "c.txt"}) {
			t.Fatalf("rename with edits after missing contents: %+v", f)
		}
	}
	cs, exact := history(t, dir)
	if exact != 0 {
		t.Fatalf("%d commits with exact renames only, with every blob present", exact)
	}
	check(cs, true)

	// Lose b.txt's first contents, as a partial clone or a mirror
	// without its largest files would: git's rename detection fails on
	// it, History goes on with exact renames.
	blob := testrepo.Git(t, dir, "rev-parse", "HEAD~3:b.txt")
	if err := os.Remove(filepath.Join(dir, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	cs, exact = history(t, dir)
	if exact != 1 {
		t.Fatalf("told of %d commits with exact renames only, want 1", exact)
	}
	check(cs, false)

	// A partial clone never lets git try (it would fetch the blobs), even
	// where they are present.
	if got := testrepo.GitStdin(t, dir, "beta\n"+long, "hash-object", "-w", "--stdin"); got != blob {
		t.Fatalf("restored blob %s, want %s", got, blob)
	}
	if _, exact := history(t, dir); exact != 0 {
		t.Fatalf("blobs restored: %d commits with exact renames only", exact)
	}
	testrepo.Git(t, dir, "config", "core.repositoryformatversion", "1")
	testrepo.Git(t, dir, "config", "extensions.partialClone", "origin")
	if _, exact := history(t, dir); exact != 2 {
		t.Fatalf("a partial clone: %d commits with exact renames only, want 2", exact)
	}
}

// A commit to leave out that git no longer has (pruned after a rewrite)
// is ignored, not an error.
func TestHistoryIgnoresMissingExcludes(t *testing.T) {
	dir := testrepo.NewRepo(t)
	write(t, dir, "a.txt", "a\n")
	testrepo.Git(t, dir, "add", ".")
	testrepo.Git(t, dir, "commit", "-q", "-m", "second")
	first := testrepo.Git(t, dir, "rev-parse", "HEAD~1")
	var got []string
	_, err := open(t, dir).History(context.Background(), LogOptions{Exclude: []string{strings.Repeat("12", 20), first}}, func(c Commit) error {
		got = append(got, c.Message)
		return nil
	})
	if err != nil || len(got) != 1 || got[0] != "second" {
		t.Fatalf("got %v, %v; want the second commit only", got, err)
	}
	n, err := open(t, dir).CountCommits(context.Background(), LogOptions{Exclude: []string{strings.Repeat("12", 20)}})
	if err != nil || n != 2 {
		t.Fatalf("count %d, %v; want 2", n, err)
	}
}

// ChangedFiles lists what git diff HEAD and git ls-files --others do:
// edits, staged additions and deletions, and untracked files but not
// ignored ones; staged-only leaves the worktree's edits and untracked
// files out.
func TestChangedFiles(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	write := func(name, text string) {
		t.Helper()
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"edited.go", "gone.go", "kept.go", ".gitignore"} {
		write(f, f+"\n")
	}
	write(".gitignore", "*.log\n")
	testrepo.Git(t, dir, "add", "-A")
	testrepo.Git(t, dir, "commit", "-qm", "files")
	write("edited.go", "changed\n")
	write("sub/new.go", "new\n")
	testrepo.Git(t, dir, "add", "sub/new.go")
	testrepo.Git(t, dir, "rm", "-q", "gone.go")
	write("notes/untracked.md", "u\n")
	write("debug.log", "ignored\n")
	r := open(t, dir)
	for staged, want := range map[bool][]string{
		false: {"edited.go", "gone.go", "notes/untracked.md", "sub/new.go"},
		true:  {"gone.go", "sub/new.go"},
	} {
		got, err := r.ChangedFiles(ctx, staged)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("staged=%v: %q %v, want %q", staged, got, err, want)
		}
	}
}
