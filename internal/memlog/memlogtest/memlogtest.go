// Package memlogtest is the behaviour every memlog.Store shows, to be run
// against each implementation.
package memlogtest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
)

const ref = "refs/synaptic/memory"

var sig = gitstore.Signature{Name: "Ann", Email: "ann@example.com", When: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}

// Run runs every behaviour against a store open gives, new for each.
func Run(t *testing.T, open func(t *testing.T) memlog.Store) {
	for _, tc := range []struct {
		name string
		f    func(*testing.T, memlog.Store)
	}{
		{"EmptyHasNoRefs", emptyHasNoRefs},
		{"AppendBuildsOnTheTip", appendBuildsOnTheTip},
		{"DiffTellsWhatChanged", diffTellsWhatChanged},
		{"ReadBlobRefusesWhatItCannotGive", readBlobRefuses},
		{"CompareAndSwapMovesOnlyFromOld", compareAndSwap},
		{"RefsListsByPrefix", refsByPrefix},
		{"ConcurrentAppendsAllLand", concurrentAppends},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.f(t, open(t)) })
	}
}

func file(path, data string) gitstore.File { return gitstore.File{Path: path, Data: []byte(data)} }

func mustAppend(t *testing.T, s memlog.Store, ref string, files ...gitstore.File) (gitstore.Hash, gitstore.Hash) {
	t.Helper()
	c, p, err := s.Append(context.Background(), ref, files, sig, "add")
	if err != nil || c.IsZero() {
		t.Fatalf("append to %s: %s, %v", ref, c, err)
	}
	return c, p
}

// changes renders a diff as "path=data" (or "-path=old data"), sorted.
func changes(t *testing.T, s memlog.Store, old, cur gitstore.Hash) []string {
	t.Helper()
	chs, err := s.Diff(old, cur)
	if err != nil {
		t.Fatalf("diff %s %s: %v", old, cur, err)
	}
	var out []string
	for _, ch := range chs {
		data, err := s.ReadBlob(ch.Hash, 1<<20)
		if err != nil {
			t.Fatalf("blob of %s: %v", ch.Path, err)
		}
		mark := ""
		if ch.Deleted {
			mark = "-"
		}
		out = append(out, mark+ch.Path+"="+string(data))
	}
	slices.Sort(out)
	return out
}

func emptyHasNoRefs(t *testing.T, s memlog.Store) {
	if tip, err := s.Tip(ref); err != nil || !tip.IsZero() {
		t.Fatalf("tip of a ref never written: %s, %v", tip, err)
	}
	if refs, err := s.Refs("refs/synaptic/"); err != nil || len(refs) != 0 {
		t.Fatalf("refs of an empty store: %v, %v", refs, err)
	}
}

func appendBuildsOnTheTip(t *testing.T, s memlog.Store) {
	first, parent := mustAppend(t, s, ref, file("entries/aa/1.json", "one"))
	if !parent.IsZero() {
		t.Fatalf("the first commit has parent %s", parent)
	}
	second, parent := mustAppend(t, s, ref, file("entries/bb/2.json", "two"), file("entries/aa/1.json", "one, edited"))
	if parent != first || second == first {
		t.Fatalf("second commit %s on %s, want on %s", second, parent, first)
	}
	if tip, err := s.Tip(ref); err != nil || tip != second {
		t.Fatalf("tip %s, %v, want %s", tip, err, second)
	}
	got := changes(t, s, gitstore.ZeroHash, second)
	want := []string{"entries/aa/1.json=one, edited", "entries/bb/2.json=two"}
	if !slices.Equal(got, want) {
		t.Fatalf("tree of the second commit %v, want %v", got, want)
	}
	// many files at once, some in place of others
	var many []gitstore.File
	for i := range 6 {
		many = append(many, file(fmt.Sprintf("entries/aa/%d.json", i), fmt.Sprint(i)))
	}
	third, _ := mustAppend(t, s, ref, append(many, file("entries/bb/2.json", "two, edited"))...)
	got = changes(t, s, gitstore.ZeroHash, third)
	want = []string{"entries/aa/0.json=0", "entries/aa/1.json=1", "entries/aa/2.json=2", "entries/aa/3.json=3", "entries/aa/4.json=4", "entries/aa/5.json=5", "entries/bb/2.json=two, edited"}
	if !slices.Equal(got, want) {
		t.Fatalf("tree of the third commit %v, want %v", got, want)
	}
}

func diffTellsWhatChanged(t *testing.T, s memlog.Store) {
	a, _ := mustAppend(t, s, ref, file("entries/aa/1.json", "one"), file("entries/aa/2.json", "two"))
	b, _ := mustAppend(t, s, ref, file("entries/aa/2.json", "two, edited"), file("ops/cc/3.json", "three"))
	if got := changes(t, s, a, b); !slices.Equal(got, []string{"entries/aa/2.json=two, edited", "ops/cc/3.json=three"}) {
		t.Errorf("a to b: %v", got)
	}
	// backwards, what b added is gone, with its old blob
	if got := changes(t, s, b, a); !slices.Equal(got, []string{"-ops/cc/3.json=three", "entries/aa/2.json=two"}) {
		t.Errorf("b to a: %v", got)
	}
	if got := changes(t, s, b, b); len(got) != 0 {
		t.Errorf("a commit against itself: %v", got)
	}
	// the same data is the same blob, wherever it lies
	c, _ := mustAppend(t, s, "refs/synaptic/other", file("x/1.json", "one"))
	ca, _ := s.Diff(gitstore.ZeroHash, c)
	aa, _ := s.Diff(gitstore.ZeroHash, a)
	if len(ca) != 1 || len(aa) != 2 || ca[0].Hash != aa[0].Hash || ca[0].Hash.IsZero() {
		t.Errorf("the same data in two trees: %v and %v", ca, aa)
	}
}

func readBlobRefuses(t *testing.T, s memlog.Store) {
	c, _ := mustAppend(t, s, ref, file("entries/aa/1.json", strings.Repeat("x", 100)))
	chs, err := s.Diff(gitstore.ZeroHash, c)
	if err != nil || len(chs) != 1 {
		t.Fatalf("diff: %v %v", chs, err)
	}
	if data, err := s.ReadBlob(chs[0].Hash, 100); err != nil || len(data) != 100 {
		t.Errorf("a blob of the limit's size: %d bytes, %v", len(data), err)
	}
	if _, err := s.ReadBlob(chs[0].Hash, 99); err == nil {
		t.Error("a blob over the limit was read")
	}
	if _, err := s.ReadBlob(gitstore.NewHash(strings.Repeat("ab", 20)), 1<<20); err == nil {
		t.Error("a hash of nothing read as a blob")
	}
}

func compareAndSwap(t *testing.T, s memlog.Store) {
	ctx := context.Background()
	a, _ := mustAppend(t, s, ref, file("entries/aa/1.json", "one"))
	b, _ := mustAppend(t, s, ref, file("entries/aa/2.json", "two"))
	if err := s.CompareAndSwap(ctx, ref, a, a); !errors.Is(err, gitstore.ErrConflict) {
		t.Errorf("swap from a commit the ref left: %v, want a conflict", err)
	}
	if err := s.CompareAndSwap(ctx, ref, a, gitstore.ZeroHash); !errors.Is(err, gitstore.ErrConflict) {
		t.Errorf("create over an existing ref: %v, want a conflict", err)
	}
	if tip, _ := s.Tip(ref); tip != b {
		t.Fatalf("a refused swap moved the ref to %s", tip)
	}
	if err := s.CompareAndSwap(ctx, ref, a, b); err != nil {
		t.Fatalf("swap back from the tip: %v", err)
	}
	if err := s.CompareAndSwap(ctx, "refs/synaptic/new", b, gitstore.ZeroHash); err != nil {
		t.Fatalf("create a ref: %v", err)
	}
	for r, want := range map[string]gitstore.Hash{ref: a, "refs/synaptic/new": b} {
		if tip, _ := s.Tip(r); tip != want {
			t.Errorf("%s at %s, want %s", r, tip, want)
		}
	}
	// the next append builds on where the swap left the ref
	if _, parent := mustAppend(t, s, ref, file("entries/aa/3.json", "three")); parent != a {
		t.Errorf("append after a swap built on %s, want %s", parent, a)
	}
}

func refsByPrefix(t *testing.T, s memlog.Store) {
	m, _ := mustAppend(t, s, "refs/synaptic/memory", file("a", "1"))
	p, _ := mustAppend(t, s, "refs/synaptic/private/memory", file("a", "2"))
	n, _ := mustAppend(t, s, "refs/notes/synaptic", file("a", "3"))
	mustAppend(t, s, "refs/synaptic-other/memory", file("a", "4"))
	got, err := s.Refs("refs/synaptic/", "refs/notes/synaptic")
	want := map[string]gitstore.Hash{"refs/synaptic/memory": m, "refs/synaptic/private/memory": p, "refs/notes/synaptic": n}
	if err != nil || len(got) != len(want) {
		t.Fatalf("refs: %v, %v, want %v", got, err, want)
	}
	for r, h := range want {
		if got[r] != h {
			t.Errorf("%s at %s, want %s", r, got[r], h)
		}
	}
}

func concurrentAppends(t *testing.T, s memlog.Store) {
	const writers, each = 4, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				path := fmt.Sprintf("entries/%02d/%d.json", w, i)
				if _, _, err := s.Append(context.Background(), ref, []gitstore.File{file(path, path)}, sig, "add"); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent append: %v", err)
	}
	tip, _ := s.Tip(ref)
	if got := changes(t, s, gitstore.ZeroHash, tip); len(got) != writers*each {
		t.Fatalf("%d files after %d appends: %v", len(got), writers*each, got)
	}
}
