package history_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/history"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

// fixture is a real repository with a real cache, and the Code over them.
type fixture struct {
	dir       string
	code      *history.Code
	c         *cache.Cache
	refreshed int
}

func open(t *testing.T, dir string) *fixture {
	t.Helper()
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { repo.Close() })
	state := t.TempDir()
	c, _, err := cache.Open(filepath.Join(state, "cache.db"), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	f := &fixture{dir: dir, c: c}
	f.code = history.New(history.Options{
		Repo:     repo,
		Cache:    func() (history.Cache, error) { return c, nil },
		Refresh:  func(context.Context) error { f.refreshed++; return nil },
		Snapshot: filepath.Join(state, "cochange.model"),
	})
	return f
}

// commit writes the files (name, content pairs) and commits them.
func (f *fixture) commit(t *testing.T, msg string, files ...string) string {
	t.Helper()
	for i := 0; i < len(files); i += 2 {
		p := filepath.Join(f.dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			t.Fatal(err)
		}
		testrepo.Git(t, f.dir, "add", files[i])
	}
	testrepo.Git(t, f.dir, "commit", "-q", "-m", msg)
	return testrepo.Git(t, f.dir, "rev-parse", "HEAD")
}

func (f *fixture) has(t *testing.T, sha string) bool {
	t.Helper()
	ok, err := f.c.HasCommit(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	return ok
}

// Index walks HEAD once: a second run with nothing new walks nothing, and
// catching up costs nothing until history was indexed, then indexes what
// HEAD gained.
func TestIndexAndCatchUp(t *testing.T) {
	ctx := context.Background()
	f := open(t, testrepo.NewRepo(t))
	first := f.commit(t, "one", "a.go", "a1", "b.go", "b1")
	if err := f.code.CatchUp(ctx); err != nil || f.has(t, first) {
		t.Fatalf("catch-up before any index: err %v, indexed %v", err, f.has(t, first))
	}
	rep, err := f.code.Index(ctx, history.IndexOptions{})
	if err != nil || rep.Indexed != 2 || rep.Seen != 2 || !slices.Equal(rep.Revs, []string{"HEAD"}) {
		t.Fatalf("first index: %+v, %v", rep, err)
	}
	if rep, err = f.code.Index(ctx, history.IndexOptions{}); err != nil || rep.Seen != 0 || rep.Indexed != 0 {
		t.Fatalf("index with nothing new walked: %+v, %v", rep, err)
	}
	second := f.commit(t, "two", "a.go", "a2", "b.go", "b2")
	if err := f.code.CatchUp(ctx); err != nil || !f.has(t, second) {
		t.Fatalf("catch-up after a commit: err %v, indexed %v", err, f.has(t, second))
	}
}

// Files that changed together are suggested for each other; a file only
// sweeping commits touched is told why it has none.
func TestSuggestAndCochanges(t *testing.T) {
	ctx := context.Background()
	f := open(t, testrepo.NewRepo(t))
	for i := range 3 {
		n := string(rune('0' + i))
		f.commit(t, "pair "+n, "api/handler.go", "h"+n, "api/handler_test.go", "t"+n)
	}
	var sweep []string
	for i := range 60 {
		sweep = append(sweep, filepath.Join("gen", "f"+strings.Repeat("x", i)+".go"), "g")
	}
	f.commit(t, "sweep", sweep...)
	query, got, err := f.code.Suggest(ctx, history.SuggestRequest{Files: []string{"api/handler.go"}, N: 3})
	if err != nil || !slices.Equal(query, []string{"api/handler.go"}) || len(got) == 0 || got[0].File != "api/handler_test.go" {
		t.Fatalf("suggest: %q %+v %v", query, got, err)
	}
	_, n, err := f.code.Cochanges(ctx, "api/handler.go", "", 3, nil)
	if err != nil || n != 3 {
		t.Fatalf("cochanges: %d commits, %v", n, err)
	}
	why, err := f.code.NoCochanges(ctx, "gen/f.go")
	if err != nil || !strings.Contains(why, "changed only in 1 commit of more than") {
		t.Fatalf("no cochanges: %q, %v", why, err)
	}
	if why, _ = f.code.NoCochanges(ctx, "nowhere.go"); !strings.Contains(why, "no indexed commit touches it") {
		t.Fatalf("no cochanges of an unknown file: %q", why)
	}
}

// After an amend, post-rewrite drops the old commit from the index, adds
// the new one and refreshes memory; post-merge only refreshes.
func TestHookRewriteAndMerge(t *testing.T) {
	ctx := context.Background()
	f := open(t, testrepo.NewRepo(t))
	old := f.commit(t, "typo", "a.go", "a")
	if _, err := f.code.Index(ctx, history.IndexOptions{}); err != nil || !f.has(t, old) {
		t.Fatalf("index: %v", err)
	}
	testrepo.Git(t, f.dir, "commit", "-q", "--amend", "-m", "fixed")
	amended := testrepo.Git(t, f.dir, "rev-parse", "HEAD")
	if err := f.code.Hook(ctx, "post-rewrite", []string{"amend"}, old+" "+amended+"\n"); err != nil {
		t.Fatal(err)
	}
	if f.has(t, old) || !f.has(t, amended) || f.refreshed != 1 {
		t.Fatalf("after post-rewrite: old indexed %v, new indexed %v, refreshed %d", f.has(t, old), f.has(t, amended), f.refreshed)
	}
	if err := f.code.Hook(ctx, "post-merge", []string{"0"}, ""); err != nil || f.refreshed != 2 {
		t.Fatalf("post-merge: %v, refreshed %d", err, f.refreshed)
	}
	if err := f.code.Hook(ctx, "pre-rebase", nil, ""); err == nil || !strings.Contains(err.Error(), `unknown hook "pre-rebase"`) {
		t.Fatalf("an unknown hook: %v", err)
	}
}

// A bare repository has no changed files, an empty one no commits: each
// is told as such.
func TestSuggestWithoutAWorkTreeOrCommits(t *testing.T) {
	ctx := context.Background()
	bare := filepath.Join(t.TempDir(), "bare.git")
	testrepo.Git(t, filepath.Dir(bare), "clone", "-q", "--bare", testrepo.NewRepo(t), bare)
	if _, _, err := open(t, bare).code.Suggest(ctx, history.SuggestRequest{}); !errors.Is(err, history.ErrNoWorkTree) {
		t.Fatalf("bare: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	testrepo.Git(t, filepath.Dir(empty), "init", "-q", empty)
	if _, _, err := open(t, empty).code.Suggest(ctx, history.SuggestRequest{Files: []string{"a"}}); !errors.Is(err, history.ErrNoCommits) {
		t.Fatalf("empty: %v", err)
	}
	if _, err := open(t, empty).code.Index(ctx, history.IndexOptions{}); !errors.Is(err, history.ErrNoCommits) {
		t.Fatalf("index of an empty repository: %v", err)
	}
}

// After the cache is rebuilt, the next catch-up walks again the history
// that had been indexed, from the tips read before (WalkAgain writes them
// into the new cache first, so that a rebuild killed midway still walks
// them). A tip git does not have is left out; with none left, the
// catch-up stops asking.
func TestCatchUpWalksAgainAfterARebuild(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	f := open(t, dir)
	first := f.commit(t, "one", "a.go", "a1")
	second := f.commit(t, "two", "a.go", "a2", "b.go", "b1")
	if _, err := f.code.Index(ctx, history.IndexOptions{}); err != nil {
		t.Fatal(err)
	}
	tips, err := f.code.Walked(ctx)
	if err != nil || len(tips) != 1 || tips[0] != second {
		t.Fatalf("walked %v (%v), want [%s]", tips, err, second)
	}
	g := open(t, dir) // the rebuilt cache
	if err := g.code.WalkAgain(ctx, append(tips, strings.Repeat("0", 40))); err != nil {
		t.Fatal(err)
	}
	if g.has(t, first) {
		t.Fatal("indexed before the catch-up")
	}
	if err := g.code.CatchUp(ctx); err != nil || !g.has(t, first) || !g.has(t, second) {
		t.Fatalf("catch-up after a rebuild: err %v, indexed %v %v", err, g.has(t, first), g.has(t, second))
	}
	if again, err := g.c.Meta(ctx, "history:rewalk"); err != nil || again != "" {
		t.Fatalf("still to walk again after the walk: %q (%v)", again, err)
	}
	if now, err := g.code.Walked(ctx); err != nil || !slices.Equal(now, tips) {
		t.Fatalf("walked after the walk again: %v (%v), want %v", now, err, tips)
	}
	// tips already walked (two processes caught up at once): asked once
	if err := g.code.WalkAgain(ctx, tips); err != nil {
		t.Fatal(err)
	}
	if err := g.code.CatchUp(ctx); err != nil {
		t.Fatal(err)
	}
	if again, err := g.c.Meta(ctx, "history:rewalk"); err != nil || again != "" {
		t.Fatalf("still to walk again what was walked: %q (%v)", again, err)
	}
	h := open(t, dir)
	if err := h.code.WalkAgain(ctx, []string{strings.Repeat("1", 40)}); err != nil {
		t.Fatal(err)
	}
	if err := h.code.CatchUp(ctx); err != nil || h.has(t, first) {
		t.Fatalf("catch-up with no tip left: err %v, indexed %v", err, h.has(t, first))
	}
	if again, err := h.c.Meta(ctx, "history:rewalk"); err != nil || again != "" {
		t.Fatalf("still asking to walk a tip git does not have: %q (%v)", again, err)
	}
}
