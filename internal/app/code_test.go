package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// codeRepo is a repository for memory-meets-code tests: commits get
// times in order (git's --since and patch-id matching see real history),
// and memory is saved through a Service opened on a worktree.
type codeRepo struct {
	t    *testing.T
	dir  string
	tick int
}

func newCodeRepo(t *testing.T) *codeRepo {
	return &codeRepo{t: t, dir: testrepo.NewRepo(t)}
}

// git runs git in dir with the next commit time.
func (r *codeRepo) git(dir string, args ...string) string {
	r.t.Helper()
	r.tick++
	date := fmt.Sprintf("2026-01-01T00:%02d:%02dZ", r.tick/60, r.tick%60)
	r.t.Setenv("GIT_COMMITTER_DATE", date)
	r.t.Setenv("GIT_AUTHOR_DATE", date)
	return testrepo.Git(r.t, dir, args...)
}

// commit writes files (path, content pairs) in dir and commits them.
func (r *codeRepo) commit(dir, msg string, files ...string) {
	r.t.Helper()
	for i := 0; i+1 < len(files); i += 2 {
		p := filepath.Join(dir, files[i])
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(files[i+1]), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
	r.git(dir, "add", "-A")
	r.git(dir, "commit", "-q", "-m", msg)
}

func (r *codeRepo) open(dir string) *Service {
	r.t.Helper()
	s, err := Open(dir, Options{Warn: os.Stderr, Model: "no-such-model"})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { s.Close() })
	return s
}

func (r *codeRepo) save(s *Service, content string) string {
	r.t.Helper()
	e, err := s.Memory().Save(context.Background(), SaveRequest{Content: content, Type: memory.TypeDecision})
	if err != nil {
		r.t.Fatal(err)
	}
	return e.ID
}

// hit finds id among a search's results for query.
func hit(t *testing.T, s *Service, query string, f Filter, id string) (Hit, int, bool) {
	t.Helper()
	hits, _, err := s.Recall().Search(context.Background(), SearchRequest{Query: query, Filter: f})
	if err != nil {
		t.Fatal(err)
	}
	for i, h := range hits {
		if h.ID == id {
			return h.Hit, i, true
		}
	}
	return Hit{}, -1, false
}

// Memory saved on a feature branch is marked on main, ranked below
// memory of main's line, left out with --this-branch and shown in the
// session start with its branch; once the branch lands (by a merge, a
// squash-merge or a rebase-merge), it is memory like any other.
func TestBranchMemoryIsMarkedUntilItLands(t *testing.T) {
	for _, how := range []string{"merge", "squash", "rebase"} {
		t.Run(how, func(t *testing.T) {
			ctx := context.Background()
			r := newCodeRepo(t)
			s := r.open(r.dir)
			r.commit(r.dir, "billing", "billing/retry.go", "package billing\n")
			onMain := r.save(s, "queue workers retry failed jobs three times")
			r.git(r.dir, "checkout", "-q", "-b", "feature/queue")
			r.commit(r.dir, "queue: first cut", "queue/queue.go", "package queue\n")
			onFeature := r.save(s, "queue workers retry failed jobs with jitter")
			r.commit(r.dir, "queue: second cut", "queue/queue.go", "package queue\n\nconst Jitter = 1\n")
			r.git(r.dir, "checkout", "-q", "main")
			r.commit(r.dir, "main moves on", "billing/retry.go", "package billing\n\n// moved on\n")

			h, _, ok := hit(t, s, "queue workers retry failed jobs", Filter{}, onFeature)
			if !ok || h.Unmerged != "feature/queue" {
				t.Fatalf("on main, the feature's memory: found %v, unmerged %q; want it marked feature/queue", ok, h.Unmerged)
			}
			if h.Priors == nil || h.Priors.Line != 0.5 {
				t.Errorf("priors %+v: want the other-branch weight", h.Priors)
			}
			if m, _, _ := hit(t, s, "queue workers retry failed jobs", Filter{}, onMain); m.Unmerged != "" {
				t.Errorf("main's own memory marked %q", m.Unmerged)
			}
			if _, _, ok := hit(t, s, "queue workers retry failed jobs", Filter{Branches: BranchesThis}, onFeature); ok {
				t.Error("--this-branch kept the feature's memory")
			}
			if h, _, ok := hit(t, s, "queue workers retry failed jobs", Filter{Branches: BranchesAll}, onFeature); !ok || h.Priors.Line != 1 || h.Unmerged == "" {
				t.Errorf("--all-branches: found %v, line weight %v, mark %q; want it weighed as any other and still marked", ok, h.Priors, h.Unmerged)
			}
			text, _, err := s.Agent().sessionContext(ctx, 8000)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(text, "[on feature/queue, not merged] queue workers retry failed jobs with jitter") {
				t.Errorf("session start does not mark the feature's memory:\n%s", text)
			}

			switch how {
			case "merge":
				r.git(r.dir, "merge", "-q", "--no-ff", "-m", "merge feature", "feature/queue")
			case "squash":
				r.git(r.dir, "merge", "-q", "--squash", "feature/queue")
				r.git(r.dir, "commit", "-q", "-m", "queue (squashed)")
			case "rebase":
				r.git(r.dir, "checkout", "-q", "feature/queue")
				r.git(r.dir, "rebase", "-q", "main")
				r.git(r.dir, "checkout", "-q", "main")
				r.git(r.dir, "merge", "-q", "--ff-only", "feature/queue")
			}
			if h, _, ok := hit(t, s, "queue workers retry failed jobs", Filter{Branches: BranchesThis}, onFeature); !ok || h.Unmerged != "" {
				t.Errorf("after the %s: found %v, marked %q; want it on the line", how, ok, h.Unmerged)
			}
		})
	}
}

// A squash-merge whose branch is deleted leaves memory anchored on the
// branch's last commit on the line (the whole branch's patch is known
// from it); memory anchored before later commits of a deleted branch
// cannot be matched and stays marked (documented).
func TestSquashedAndDeletedBranch(t *testing.T) {
	r := newCodeRepo(t)
	s := r.open(r.dir)
	r.git(r.dir, "checkout", "-q", "-b", "topic")
	r.commit(r.dir, "topic 1", "a.txt", "one\n")
	r.commit(r.dir, "topic 2", "a.txt", "one\ntwo\n")
	atTip := r.save(s, "the topic branch settles on two lines")
	r.git(r.dir, "checkout", "-q", "main")
	r.commit(r.dir, "main", "b.txt", "b\n")
	r.git(r.dir, "merge", "-q", "--squash", "topic")
	r.git(r.dir, "commit", "-q", "-m", "topic (squashed)")
	r.git(r.dir, "branch", "-q", "-D", "topic")
	if h, _, ok := hit(t, s, "topic branch settles", Filter{}, atTip); !ok || h.Unmerged != "" {
		t.Errorf("memory at the squashed branch's tip: found %v, marked %q", ok, h.Unmerged)
	}
}

// Two worktrees share one memory and each reads it from its own HEAD.
func TestWorktreesReadMemoryFromTheirOwnHead(t *testing.T) {
	r := newCodeRepo(t)
	main := r.open(r.dir)
	wt := filepath.Join(filepath.Dir(r.dir), "wt")
	r.git(r.dir, "worktree", "add", "-q", "-b", "side", wt)
	side := r.open(wt)
	r.commit(wt, "side work", "side.txt", "side\n")
	fromSide := r.save(side, "the side worktree keeps its notes here")
	r.commit(r.dir, "main work", "main.txt", "main\n")
	fromMain := r.save(main, "the main worktree keeps its notes there")

	for _, c := range []struct {
		name     string
		s        *Service
		id, mark string
	}{
		{"main sees side's", main, fromSide, "side"},
		{"main sees its own", main, fromMain, ""},
		{"side sees main's", side, fromMain, "main"},
		{"side sees its own", side, fromSide, ""},
	} {
		h, _, ok := hit(t, c.s, "worktree keeps its notes", Filter{}, c.id)
		if !ok || h.Unmerged != c.mark {
			t.Errorf("%s: found %v, marked %q; want %q", c.name, ok, h.Unmerged, c.mark)
		}
	}
}

// Memory naming a file shows as stale once the file changes, and is
// current again once confirmed; a deleted file says so.
func TestMemoryNamingAFileGoesStale(t *testing.T) {
	ctx := context.Background()
	r := newCodeRepo(t)
	s := r.open(r.dir)
	r.commit(r.dir, "billing", "billing/retry.go", "package billing\n// 1 4 16\n", "billing/api.go", "package billing\n")
	id := r.save(s, "retries live in billing/retry.go:12 and back off 1/4/16 s")
	other := r.save(s, "the api in api.go has no retries of its own")
	plain := r.save(s, "we ship on fridays")

	e, _ := s.Recall().Show(ctx, id)
	if want := map[string]string{"billing/retry.go": blobOf(t, r.dir, "billing/retry.go")}; !mapsEqual(e.Files, want) || e.Anchor == "" {
		t.Fatalf("recorded files %v at %q; want %v at HEAD", e.Files, e.Anchor, want)
	}
	if e.Stale != nil {
		t.Fatalf("fresh memory stale: %+v", e.Stale)
	}

	r.commit(r.dir, "retry: back off 2/8", "billing/retry.go", "package billing\n// 2 8\n")
	r.commit(r.dir, "retry: cap", "billing/retry.go", "package billing\n// 2 8 cap\n")
	e, _ = s.Recall().Show(ctx, id)
	if got := CodeMarks(e.Entry); got != "[billing/retry.go changed in 2 commits since]" {
		t.Errorf("marks %q", got)
	}
	text, _, err := s.Agent().sessionContext(ctx, 8000)
	if err != nil {
		t.Fatal(err)
	}
	check := text[strings.Index(text, "## Check before relying on"):]
	if !strings.Contains(check, "[billing/retry.go changed in 2 commits since] retries live in billing/retry.go") {
		t.Errorf("session start does not put the stale memory under Check before relying on:\n%s", text)
	}
	if strings.Contains(check, "api.go has no retries") || strings.Contains(check, "fridays") {
		t.Errorf("current memory under Check before relying on:\n%s", text)
	}
	rep, err := s.Recall().Verify(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Checked != 2 || len(rep.Stale) != 1 || rep.Stale[0].ID != id || len(rep.Stale[0].Changes) != 1 ||
		len(rep.Stale[0].Changes[0].Recent) != 2 || rep.Stale[0].Changes[0].Recent[0].Subject != "retry: cap" {
		t.Fatalf("verify: %+v", rep)
	}

	if _, err := s.Memory().Confirm(ctx, id); err != nil {
		t.Fatal(err)
	}
	if e, _ = s.Recall().Show(ctx, id); e.Stale != nil || e.Verified == "" {
		t.Errorf("confirmed memory: stale %+v, verified %q", e.Stale, e.Verified)
	}
	r.commit(r.dir, "api goes", "billing/api.go", "")
	r.git(r.dir, "rm", "-q", "billing/api.go")
	r.git(r.dir, "commit", "-q", "-m", "drop the api")
	e, _ = s.Recall().Show(ctx, other)
	if got := CodeMarks(e.Entry); got != "[billing/api.go deleted]" {
		t.Errorf("marks of memory naming a deleted file: %q", got)
	}
	// An edit anchors it again, with what the new text names.
	content := "the api moved to billing/retry.go"
	if _, err := s.Memory().Edit(ctx, other, EditRequest{Content: &content}); err != nil {
		t.Fatal(err)
	}
	if e, _ = s.Recall().Show(ctx, other); e.Stale != nil || e.Files["billing/retry.go"] == "" || len(e.Files) != 1 {
		t.Errorf("edited memory: stale %+v, files %v", e.Stale, e.Files)
	}
	if e, _ = s.Recall().Show(ctx, plain); e.Files != nil || e.Stale != nil {
		t.Errorf("memory naming no file: files %v, stale %v", e.Files, e.Stale)
	}
}

// An empty repository has no commit to anchor to: memory is saved
// without one and never marked.
func TestMemoryInAnEmptyRepository(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "empty")
	testrepo.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	s, err := Open(dir, Options{Warn: os.Stderr, Model: "no-such-model"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	e, err := s.Memory().Save(context.Background(), SaveRequest{Content: "nothing in main.go yet", Type: memory.TypeDecision})
	if err != nil {
		t.Fatal(err)
	}
	if e.Anchor != "" || e.Files != nil {
		t.Errorf("anchor %q, files %v in an empty repository", e.Anchor, e.Files)
	}
	rep, err := s.Recall().Verify(context.Background(), []string{e.ID})
	if err != nil || len(rep.Stale) != 0 {
		t.Errorf("verify: %+v, %v", rep, err)
	}
}

func TestFileMentions(t *testing.T) {
	got := fileMentions("See billing/retry.go:42, ./cmd/main.go and retry.go. Docs at https://example.com/a/b.html; v1.2.3 and e.g. (README.md)")
	// URLs and version numbers are not names; "e.g" may be one (a file
	// named so): the tree decides.
	want := []string{"billing/retry.go", "cmd/main.go", "retry.go", "e.g", "README.md"}
	if !slices.Equal(got, want) {
		t.Errorf("mentions %q, want %q", got, want)
	}
}

func blobOf(t *testing.T, dir, path string) string {
	return testrepo.Git(t, dir, "rev-parse", "HEAD:"+path)
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// A shallow clone lacks old commits by design: memory anchored on them is
// not taken for another branch's.
func TestShallowCloneKeepsOldMemoryOnTheLine(t *testing.T) {
	r := newCodeRepo(t)
	s := r.open(r.dir)
	old := r.save(s, "the parser keeps its tables in one place")
	for i := range 3 {
		r.commit(r.dir, fmt.Sprint("later ", i), "later.txt", fmt.Sprint(i))
	}
	clone := filepath.Join(t.TempDir(), "shallow")
	testrepo.Git(t, r.dir, "clone", "-q", "--depth", "1", "file://"+r.dir, clone)
	testrepo.Git(t, clone, "fetch", "-q", "origin", "refs/synaptic/*:refs/synaptic/*")
	c := r.open(clone)
	if h, _, ok := hit(t, c, "parser tables", Filter{}, old); !ok || h.Unmerged != "" {
		t.Errorf("in a shallow clone: found %v, marked %q", ok, h.Unmerged)
	}
}

// The session start's "files of the last commit" come from the commit
// index once HEAD is indexed, and are what git gives: a rename, a
// deletion and a new folder included.
func TestHeadFilesFromTheIndexAreGits(t *testing.T) {
	ctx := context.Background()
	r := newCodeRepo(t)
	r.commit(r.dir, "one", "a.go", "package a\n", "old/b.txt", "bee\n", "c.txt", "see\n")
	r.git(r.dir, "mv", "old/b.txt", "b.txt")
	r.git(r.dir, "rm", "-q", "c.txt")
	r.commit(r.dir, "two", "a.go", "package a // two\n", "d/e.md", "new\n")
	s := r.open(r.dir)
	indexed := func() bool {
		var ok bool
		head := strings.TrimSpace(testrepo.Git(t, r.dir, "rev-parse", "HEAD"))
		s.withCache(ctx, func(c *cache.Cache) error { ok, _ = c.HasCommit(ctx, head); return nil })
		return ok
	}
	if indexed() {
		t.Fatal("HEAD indexed before any command asked")
	}
	fromGit := s.headFiles(ctx)
	if _, err := s.Code().Index(ctx, IndexOptions{Max: 1000}); err != nil || !indexed() {
		t.Fatalf("HEAD not indexed: %v", err)
	}
	fromIndex := s.headFiles(ctx)
	want := []string{"a.go", "b.txt", "c.txt", "d/e.md"}
	for _, got := range [][]string{fromGit, fromIndex} {
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("files of HEAD: git %q, index %q; want %q", fromGit, fromIndex, want)
		}
	}
}

// MemoryAbout keeps the memory that names the file, by its path or its
// file name as a whole name, not what merely shares a word with it.
func TestMemoryAboutNamesTheFile(t *testing.T) {
	ctx := context.Background()
	r := newCodeRepo(t)
	r.commit(r.dir, "files", "internal/web/server.go", "package web\n", "cmd/myserver.go", "package main\n")
	s := r.open(r.dir)
	byName := r.save(s, "server.go must close idle connections before shutdown")
	byPath := r.save(s, "internal/web/server.go renders every page with html/template")
	r.save(s, "the server restarts nightly; the api server keeps its sessions")
	r.save(s, "cmd/myserver.go is only a demo of the server package")
	hits, err := s.Recall().MemoryAbout(ctx, "internal/web/server.go", nil, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, h := range hits {
		got = append(got, h.ID)
	}
	slices.Sort(got)
	want := []string{byName, byPath}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("memory about internal/web/server.go: %d hits %q, want %q", len(hits), got, want)
	}
	if hits, _ := s.Recall().MemoryAbout(ctx, "internal/web/server.go", nil, 1); len(hits) != 1 {
		t.Errorf("at most 1: %d", len(hits))
	}
	if hits, err := s.Recall().MemoryAbout(ctx, "+.c", nil, 5); err != nil || len(hits) != 0 {
		t.Errorf("a name without words: %d %v", len(hits), err)
	}
}
