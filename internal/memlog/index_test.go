package memlog_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
	"github.com/git-synaptic/git-synaptic/memory"
)

const (
	shared  = "refs/synaptic/memory"
	private = "refs/synaptic-private/memory"
	sub     = "refs/synaptic-sub/org/memory"
)

var when = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// entryFile is an entry of content as the log stores it.
func entryFile(t *testing.T, content string) (memory.Entry, gitstore.File) {
	t.Helper()
	e := memory.Entry{V: 1, ID: memory.NewID(), Type: memory.TypeInsight, Content: content, Author: "Ann <ann@x>", Created: when}
	doc, err := memory.EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	return e, gitstore.File{Path: memory.EntryPath(e.ID), Data: doc}
}

// indexFixture is an in-memory log, a real cache and an Index between
// them that records its warnings.
type indexFixture struct {
	log   *memlog.Memory
	c     *cache.Cache
	ix    *memlog.Index
	warns []string
}

func newIndexFixture(t *testing.T) *indexFixture {
	t.Helper()
	c, _, err := cache.Open(filepath.Join(t.TempDir(), "cache.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	f := &indexFixture{log: memlog.NewMemory(), c: c}
	f.ix = &memlog.Index{
		Log:       f.log,
		Warnf:     func(format string, args ...any) { f.warns = append(f.warns, fmt.Sprintf(format, args...)) },
		Droppable: func(ref string) bool { return strings.HasPrefix(ref, "refs/synaptic-sub/") },
		Private:   func(ref string) bool { return ref == private },
	}
	return f
}

func (f *indexFixture) append(t *testing.T, ref string, files ...gitstore.File) {
	t.Helper()
	sig := gitstore.Signature{Name: "Ann", Email: "ann@x", When: when}
	if _, _, err := f.log.Append(context.Background(), ref, files, sig, "memory"); err != nil {
		t.Fatal(err)
	}
}

// update indexes the log's refs under prefixes, as the app does.
func (f *indexFixture) update(t *testing.T) {
	t.Helper()
	local, err := f.log.Refs("refs/synaptic/", "refs/synaptic-private/", "refs/synaptic-sub/")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Update(context.Background(), f.c, local); err != nil {
		t.Fatalf("update: %v", err)
	}
}

func (f *indexFixture) get(t *testing.T, id string) (cache.Row, bool) {
	t.Helper()
	row, err := f.c.Get(context.Background(), id)
	if err != nil {
		return row, false
	}
	return row, true
}

// An Index brings the cache up to each ref, marks private memory, records
// what cannot be read as memory (and says so) without losing the rest,
// and takes a vanished subscription's entries out.
func TestIndexFollowsTheRefs(t *testing.T) {
	ctx := context.Background()
	f := newIndexFixture(t)
	a, fa := entryFile(t, "the release script needs GNU tar")
	p, fp := entryFile(t, "my own reminder")
	s, fs := entryFile(t, "org-wide: sign every tag")
	f.append(t, shared, fa, gitstore.File{Path: memory.EntryPath(memory.NewID()), Data: []byte("not json")})
	f.append(t, private, fp)
	f.append(t, sub, fs)
	f.update(t)

	for _, want := range []struct {
		e       memory.Entry
		source  string
		private bool
	}{{a, shared, false}, {p, private, true}, {s, sub, false}} {
		row, ok := f.get(t, want.e.ID)
		if !ok || row.Content != want.e.Content || row.Source != want.source || row.Private != want.private {
			t.Errorf("%q: indexed %v as %+v; want from %s, private %v", want.e.Content, ok, row, want.source, want.private)
		}
	}
	problems, err := f.c.Problems(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 1 || problems[0].Source != shared || len(f.warns) != 1 || !strings.Contains(f.warns[0], problems[0].Path) {
		t.Fatalf("problems %+v, warnings %q; want the file that is not JSON, once each", problems, f.warns)
	}

	// Tips unchanged: nothing read, nothing said again.
	f.update(t)
	if len(f.warns) != 1 {
		t.Fatalf("an update with nothing new warned again: %q", f.warns)
	}

	// A new entry on one ref is read alone.
	b, fb := entryFile(t, "CI caches the module proxy")
	f.append(t, shared, fb)
	f.update(t)
	if _, ok := f.get(t, b.ID); !ok {
		t.Fatal("an entry appended after the first update was not indexed")
	}

	// The subscription goes: its entries leave the index, the rest stays.
	local, err := f.log.Refs("refs/synaptic/", "refs/synaptic-private/")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.ix.Update(ctx, f.c, local); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.get(t, s.ID); ok {
		t.Error("a vanished subscription's entry is still indexed")
	}
	for _, e := range []memory.Entry{a, p, b} {
		if _, ok := f.get(t, e.ID); !ok {
			t.Errorf("%q left the index with the subscription", e.Content)
		}
	}
	tips, err := f.c.Tips(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tips[sub]; ok || len(tips) != 2 {
		t.Errorf("indexed tips %v; want the two refs that are left", tips)
	}
}

// A tip the cache indexed whose commit is gone (history rewritten
// elsewhere) makes the next update rebuild the index from the refs.
func TestIndexRebuildsWhenTheIndexedTipIsGone(t *testing.T) {
	ctx := context.Background()
	f := newIndexFixture(t)
	a, fa := entryFile(t, "first")
	f.append(t, shared, fa)
	f.update(t)
	if err := f.c.Update(ctx, func(tx *cache.Tx) error { return tx.SetTip(shared, strings.Repeat("ab", 20)) }); err != nil {
		t.Fatal(err)
	}
	b, fb := entryFile(t, "second")
	f.append(t, shared, fb)
	f.update(t)
	for _, e := range []memory.Entry{a, b} {
		if _, ok := f.get(t, e.ID); !ok {
			t.Errorf("%q is not indexed after the rebuild", e.Content)
		}
	}
}

// Appended indexes a write alone when the cache is at its parent, and
// refuses (ErrMoved) when another writer moved the ref in between, so that
// the caller updates from the refs instead of skipping that writer's
// entries.
func TestAppendedIndexesOnlyOnTheParent(t *testing.T) {
	ctx := context.Background()
	f := newIndexFixture(t)
	_, fa := entryFile(t, "first")
	f.append(t, shared, fa)
	f.update(t)
	parent, _ := f.log.Tip(shared)

	b, fb := entryFile(t, "second")
	sig := gitstore.Signature{Name: "Ann", Email: "ann@x", When: when}
	commit, gotParent, err := f.log.Append(ctx, shared, []gitstore.File{fb}, sig, "save")
	if err != nil || gotParent != parent {
		t.Fatalf("append: parent %s, %v; want %s", gotParent, err, parent)
	}
	put := func(tx *cache.Tx) error { return tx.PutEntry(b, shared, false, fb.Data) }
	if err := f.c.Update(ctx, func(tx *cache.Tx) error { return memlog.Appended(tx, shared, parent, commit, put) }); err != nil {
		t.Fatalf("appended on the indexed tip: %v", err)
	}
	tips, _ := f.c.Tips(ctx)
	if _, ok := f.get(t, b.ID); !ok || tips[shared] != commit.String() {
		t.Fatalf("indexed %v, tip %s; want the entry, at %s", ok, tips[shared], commit)
	}

	// A teammate's write landed between the indexed tip and this one.
	_, fc := entryFile(t, "a concurrent writer's")
	mid, _, _ := f.log.Append(ctx, shared, []gitstore.File{fc}, sig, "save")
	d, fd := entryFile(t, "third")
	last, _, _ := f.log.Append(ctx, shared, []gitstore.File{fd}, sig, "save")
	put = func(tx *cache.Tx) error { return tx.PutEntry(d, shared, false, fd.Data) }
	err = f.c.Update(ctx, func(tx *cache.Tx) error { return memlog.Appended(tx, shared, mid, last, put) })
	if !errors.Is(err, memlog.ErrMoved) {
		t.Fatalf("appended on a parent the cache does not index: %v; want ErrMoved", err)
	}
	if _, ok := f.get(t, d.ID); ok {
		t.Fatal("a refused append indexed its entry")
	}
}
