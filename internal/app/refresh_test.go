package app

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// looseObject is the file of a loose object in dir's repository.
func looseObject(dir, hash string) string {
	return filepath.Join(dir, ".git", "objects", hash[:2], hash[2:])
}

// An object missing for a moment (git repacking under the reader) must not
// make the cache skip entries for good: the indexed tip stays where it was
// until everything up to the new tip was read.
func TestCacheCatchesUpAfterAnObjectWasMissingForAMoment(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	var warn bytes.Buffer
	writer, err := Open(dir, Options{Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	first, err := writer.Memory().Save(ctx, SaveRequest{Content: "first entry"})
	if err != nil {
		t.Fatal(err)
	}
	writer.Close()

	// A second entry written by a process whose cache update did not
	// happen (its Service is gone; only the ref moved).
	w2, _ := Open(dir, Options{Warn: &warn})
	second, err := w2.Memory().Save(ctx, SaveRequest{Content: "second entry, written while git repacked"})
	if err != nil {
		t.Fatal(err)
	}
	w2.Close()
	// Roll the cache back to before the second save, as if that process
	// had been killed between the ref update and its cache update.
	tipBefore := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory^")
	c, _, err := cache.Open(filepath.Join(dir, ".git", "synaptic", "cache.db"), 0)
	if err != nil {
		t.Fatal(err)
	}
	tx, _ := c.Begin(ctx)
	tx.DeleteEntry(second.ID)
	tx.SetTip(SharedRef, tipBefore)
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Hide the new commit's root tree: the next reader finds it missing.
	tree := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory^{tree}")
	obj := looseObject(dir, tree)
	if err := os.Rename(obj, obj+".away"); err != nil {
		t.Fatal(err)
	}
	r, _ := Open(dir, Options{Warn: &warn})
	if _, err := r.Recall().Show(ctx, second.ID); err == nil {
		t.Fatal("the entry is readable although its tree is missing")
	}
	r.Close()
	if !strings.Contains(warn.String(), "object not found") {
		t.Fatalf("the missing object was not reported: %q", warn.String())
	}
	if err := os.Rename(obj+".away", obj); err != nil {
		t.Fatal(err)
	}

	r, _ = Open(dir, Options{Warn: &warn})
	defer r.Close()
	for _, id := range []string{first.ID, second.ID} {
		if _, err := r.Recall().Show(ctx, id); err != nil {
			t.Fatalf("entry %s never came back once its objects were there: %v", id, err)
		}
	}
	st, err := r.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Problems) != 0 || len(st.Repaired) != 0 || st.Stats.Total != 2 {
		t.Fatalf("status: problems %v, repaired %v, total %d", st.Problems, st.Repaired, st.Stats.Total)
	}
}

// status compares the cache with the refs and rebuilds it when they differ,
// whatever made them differ.
func TestStatusRepairsACacheThatDriftedFromTheRefs(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	var warn bytes.Buffer
	s, err := Open(dir, Options{Warn: &warn})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var ids []string
	for _, text := range []string{"one", "two", "three"} {
		e, err := s.Memory().Save(ctx, SaveRequest{Content: "entry " + text})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	if _, err := s.Memory().SetPinned(ctx, ids[0], true); err != nil {
		t.Fatal(err)
	}
	c, err := s.ready(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if found, err := s.checkIndex(ctx, c); err != nil || len(found) != 0 {
		t.Fatalf("a consistent cache was found wanting: %v %v", found, err)
	}
	tx, _ := c.Begin(ctx)
	tx.DeleteEntry(ids[1])
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Repaired) != 1 || !strings.Contains(st.Repaired[0], "3 entries in the ref, 2 in the cache") {
		t.Fatalf("repaired = %v", st.Repaired)
	}
	if st.Stats.Total != 3 || st.Stats.Pinned != 1 {
		t.Fatalf("after repair: %d entries, %d pinned", st.Stats.Total, st.Stats.Pinned)
	}
	if st, _ = s.Status(ctx); len(st.Repaired) != 0 {
		t.Fatalf("second status still repairs: %v", st.Repaired)
	}
}

// A cancelled index says it was cancelled, not that there are no commits.
func TestCancelledIndexSaysCancelled(t *testing.T) {
	s := openTest(t, Options{Warn: &bytes.Buffer{}})
	if _, err := s.ready(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Code().Index(ctx, IndexOptions{})
	if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoCommits) {
		t.Fatalf("cancelled index: %v", err)
	}
}
