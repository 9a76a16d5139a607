package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

var sig = Signature{Name: "T", Email: "t@x", When: time.Unix(1700000000, 0)}

func open(t *testing.T, dir string) *Repo {
	t.Helper()
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func paths(ch []Change) []string {
	var out []string
	for _, c := range ch {
		p := c.Path
		if c.Deleted {
			p = "-" + p
		}
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func TestAppendDiffAndCAS(t *testing.T) {
	ctx := context.Background()
	r := open(t, testrepo.NewRepo(t))
	c1, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"entries/aa/a.json", []byte("a")}, {"entries/bb/b.json", []byte("b")}}, sig, "one")
	if err != nil {
		t.Fatal(err)
	}
	c2, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{"ops/cc/c.json", []byte("c")}}, sig, "two")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := r.Diff(ZeroHash, c2)
	if fmt.Sprint(paths(all)) != "[entries/aa/a.json entries/bb/b.json ops/cc/c.json]" {
		t.Fatalf("full diff: %v", paths(all))
	}
	inc, _ := r.Diff(c1, c2)
	if fmt.Sprint(paths(inc)) != "[ops/cc/c.json]" {
		t.Fatalf("incremental diff: %v", paths(inc))
	}
	back, _ := r.Diff(c2, c1)
	if fmt.Sprint(paths(back)) != "[-ops/cc/c.json]" {
		t.Fatalf("reverse diff: %v", paths(back))
	}
	data, err := r.ReadBlob(inc[0].Hash, 10)
	if err != nil || string(data) != "c" {
		t.Fatalf("read blob: %q %v", data, err)
	}
	if _, err := r.ReadBlob(inc[0].Hash, 0); err == nil {
		t.Fatal("size limit not enforced")
	}
	if _, err := r.ReadBlob(c2, 100); err == nil {
		t.Fatal("read a commit as a blob")
	}
	if err := r.CompareAndSwap(ctx, "refs/synaptic/memory", c1, c1); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale CAS: %v", err)
	}
	if err := r.CompareAndSwap(ctx, "refs/synaptic/memory", c1, c2); err != nil {
		t.Fatalf("CAS: %v", err)
	}
	if tip, _ := r.Tip("refs/synaptic/memory"); tip != c1 {
		t.Fatal("CAS did not move the ref")
	}
	testrepo.Git(t, r.WorkTree(), "fsck", "--strict", "--no-progress")
}

func TestConcurrentAppendsInProcess(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r := open(t, dir) // one Repo per writer, as separate processes would
			for i := 0; i < 25; i++ {
				p := fmt.Sprintf("entries/%02d/w%d-%d.json", i, w, i)
				if _, _, err := r.Append(ctx, "refs/synaptic/memory", []File{{p, []byte(p)}}, sig, p); err != nil {
					t.Error(err)
				}
			}
		}(w)
	}
	wg.Wait()
	r := open(t, dir)
	tip, _ := r.Tip("refs/synaptic/memory")
	all, _ := r.Diff(ZeroHash, tip)
	if len(all) != 100 {
		t.Fatalf("%d files, want 100", len(all))
	}
}

func TestMergeIntoIsAUnionAndSymmetric(t *testing.T) {
	ctx := context.Background()
	r := open(t, testrepo.NewRepo(t))
	base, _, _ := r.Append(ctx, "refs/x/base", []File{{"entries/00/base.json", []byte("base")}}, sig, "base")
	for _, ref := range []string{"refs/x/a", "refs/x/b"} {
		if err := r.CompareAndSwap(ctx, ref, base, ZeroHash); err != nil {
			t.Fatal(err)
		}
	}
	a, _, _ := r.Append(ctx, "refs/x/a", []File{{"entries/01/a.json", []byte("a")}, {"entries/00/same.json", []byte("from a")}}, sig, "a")
	b, _, _ := r.Append(ctx, "refs/x/b", []File{{"entries/02/b.json", []byte("b")}, {"entries/00/same.json", []byte("from b")}}, sig, "b")

	res, ab, err := r.MergeInto(ctx, "refs/x/a", b, sig)
	if err != nil || res != MergeUnion {
		t.Fatalf("merge b into a: %v %v", res, err)
	}
	res, ba, err := r.MergeInto(ctx, "refs/x/b", a, sig)
	if err != nil || res != MergeUnion {
		t.Fatalf("merge a into b: %v %v", res, err)
	}
	ta, _ := r.CommitTree(ab)
	tb, _ := r.CommitTree(ba)
	if ta != tb {
		t.Fatal("union depends on merge direction")
	}
	all, _ := r.Diff(ZeroHash, ab)
	got := paths(all)
	if len(got) != 5 { // base, a, b, same.json and same.json~<hash>
		t.Fatalf("union lost or duplicated files: %v", got)
	}
	// Merging again is a no-op; a fast-forward moves the ref.
	if res, _, _ := r.MergeInto(ctx, "refs/x/a", b, sig); res != MergeUpToDate {
		t.Fatalf("re-merge: %v", res)
	}
	if res, tip, _ := r.MergeInto(ctx, "refs/x/base", ab, sig); res != MergeFastForward || tip != ab {
		t.Fatalf("fast-forward: %v", res)
	}
	if res, _, _ := r.MergeInto(ctx, "refs/x/new", ab, sig); res != MergeCreated {
		t.Fatalf("create: %v", res)
	}
	blob, _ := r.WriteBlob([]byte("not a commit"))
	if _, _, err := r.MergeInto(ctx, "refs/x/a", blob, sig); err == nil {
		t.Fatal("merged a blob")
	}
}

func TestOpenFindsRepositoriesLikeGit(t *testing.T) {
	dir := testrepo.NewRepo(t)
	sub := filepath.Join(dir, "a", "b")
	os.MkdirAll(sub, 0o755)
	if r := open(t, sub); r.WorkTree() != dir || r.CommonDir() != filepath.Join(dir, ".git") {
		t.Fatalf("subdir: %s %s", r.WorkTree(), r.CommonDir())
	}
	wt := filepath.Join(t.TempDir(), "wt")
	testrepo.Git(t, dir, "worktree", "add", "-q", wt)
	if r := open(t, wt); r.CommonDir() != filepath.Join(dir, ".git") || r.CurrentBranch() != "wt" {
		t.Fatalf("worktree: %s %s", r.CommonDir(), r.CurrentBranch())
	}
	bare := filepath.Join(t.TempDir(), "bare.git")
	testrepo.Git(t, filepath.Dir(bare), "init", "-q", "--bare", bare)
	if r := open(t, bare); r.WorkTree() != "" || r.GitDir() != bare {
		t.Fatalf("bare: %q %s", r.WorkTree(), r.GitDir())
	}
	if _, err := Open(t.TempDir()); !errors.Is(err, ErrNotRepo) {
		t.Fatalf("outside a repo: %v", err)
	}
	t.Setenv("GIT_DIR", filepath.Join(dir, ".git"))
	if r := open(t, t.TempDir()); r.WorkTree() != dir {
		t.Fatalf("GIT_DIR: %s", r.WorkTree())
	}
}

func TestRewriteDropsPathsAndKeepsTheRest(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	ref := "refs/synaptic/memory"
	r.Append(ctx, ref, []File{{"entries/aa/a.json", []byte("a")}, {"entries/bb/b.json", []byte("b")}}, sig, "one a")
	tip, _, _ := r.Append(ctx, ref, []File{{"ops/cc/c.json", []byte("c")}}, sig, "two")

	// nothing to drop: history unchanged, same hashes
	old, same, err := r.Rewrite(ctx, ref, map[string]bool{"entries/zz/z.json": true}, nil, nil, sig, "")
	if err != nil || old != tip || same != tip {
		t.Fatalf("no-op rewrite: %v %v %v", old, same, err)
	}
	_, nt, err := r.Rewrite(ctx, ref, map[string]bool{"entries/aa/a.json": true}, func(m string) string { return strings.ReplaceAll(m, " a", "") },
		[]File{{"purged/aa/a.json", []byte("{}")}}, sig, "purge")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := r.Diff(ZeroHash, nt)
	if fmt.Sprint(paths(all)) != "[entries/bb/b.json ops/cc/c.json purged/aa/a.json]" {
		t.Fatalf("after rewrite: %v", paths(all))
	}
	if !r.HasPath(nt, "purged/aa/a.json") || r.HasPath(nt, "entries/aa/a.json") {
		t.Fatal("HasPath")
	}
	files, err := r.FilesUnder(nt, "purged")
	if err != nil || len(files) != 1 {
		t.Fatalf("FilesUnder: %v %v", files, err)
	}
	// every commit of the new history lacks the path; messages scrubbed
	out := testrepo.Git(t, dir, "log", "--format=%s", "--name-only", nt.String())
	if strings.Contains(out, "entries/aa") || strings.Contains(out, "one a") || !strings.Contains(out, "one") {
		t.Fatalf("history still holds the path:\n%s", out)
	}
}

// Subsections come back by name, including names with dots and values with
// spaces, and a removed section is gone.
func TestConfigSubsections(t *testing.T) {
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	ctx := context.Background()
	if subs, err := r.ConfigSubsections(ctx, "synaptic-subscription", "url"); err != nil || len(subs) != 0 {
		t.Fatalf("none set: %v %v", subs, err)
	}
	testrepo.Git(t, dir, "config", "synaptic-subscription.org.url", "/srv/org memory.git")
	testrepo.Git(t, dir, "config", "synaptic-subscription.a.b.url", "https://example.com/x.git")
	testrepo.Git(t, dir, "config", "synaptic-subscription.org.other", "ignored")
	subs, err := r.ConfigSubsections(ctx, "synaptic-subscription", "url")
	if err != nil || len(subs) != 2 || subs["org"] != "/srv/org memory.git" || subs["a.b"] != "https://example.com/x.git" {
		t.Fatalf("got %v %v", subs, err)
	}
	if err := r.ConfigRemoveSection(ctx, "synaptic-subscription.org"); err != nil {
		t.Fatal(err)
	}
	if subs, _ := r.ConfigSubsections(ctx, "synaptic-subscription", "url"); len(subs) != 1 {
		t.Errorf("after remove: %v", subs)
	}
	if err := r.Mirror(ctx, "--upload-pack=touch /tmp/x", "+refs/synaptic/*:refs/x/*"); err == nil {
		t.Error("Mirror took an option for a URL")
	}
}
