package app

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// checkIndex compares what the cache holds with the refs it claims to have
// indexed: per ref, the entry files in the tree against the indexed
// entries, and the operation files against the indexed operations
// (unreadable files, recorded as problems, are left out of both). It
// returns one line per mismatch. It reads trees only, no blobs.
func (s *core) checkIndex(ctx context.Context, c *cache.Cache) ([]string, error) {
	tips, err := c.Tips(ctx)
	if err != nil {
		return nil, err
	}
	counts, err := c.Counts(ctx)
	if err != nil {
		return nil, err
	}
	problems, err := c.Problems(ctx)
	if err != nil {
		return nil, err
	}
	// Unreadable files, per ref and per ref and top directory.
	skippedRef, skippedDir := map[string]int{}, map[string]int{}
	for _, p := range problems {
		dir, _, _ := strings.Cut(p.Path, "/")
		skippedRef[p.Source]++
		skippedDir[p.Source+" "+dir]++
	}
	var out []string
	ops, wantOps := counts.Ops, 0
	for ref, tip := range tips {
		if len(tip) != 40 {
			continue
		}
		h := gitstore.NewHash(tip)
		dirs := []string{memory.EntriesDir, memory.OpsDir}
		if ref == gitstore.NotesRef {
			dirs = []string{""} // every file is a note, under fan-out directories
		}
		for _, dir := range dirs {
			n, err := s.repo.CountFiles(h, dir)
			if err != nil {
				continue // not readable as memory: status lists it as a problem
			}
			if dir == "" {
				n -= skippedRef[ref]
			} else {
				n -= skippedDir[ref+" "+dir]
			}
			if dir == memory.OpsDir {
				wantOps += n
				continue
			}
			if got := counts.Entries[ref]; got != n {
				out = append(out, fmt.Sprintf("%s: %d entries in the ref, %d in the cache", ref, n, got))
			}
		}
	}
	if ops != wantOps {
		out = append(out, fmt.Sprintf("%d operations in the refs, %d in the cache", wantOps, ops))
	}
	sort.Strings(out)
	return out, nil
}

// verifyIndex checks the cache against the refs and, when they disagree,
// rebuilds it from the refs and checks again. It returns what it found
// wrong (nil when the cache was consistent).
func (s *core) verifyIndex(ctx context.Context) ([]string, error) {
	c, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	found, err := s.checkIndex(ctx, c)
	if err != nil || len(found) == 0 {
		return nil, err
	}
	for _, f := range found {
		s.warnf("the cache disagreed with the refs (%s); rebuilding it", f)
	}
	if err := s.rebuildMemory(ctx); err != nil {
		return found, err
	}
	again, err := s.checkIndex(ctx, c)
	if err != nil {
		return found, err
	}
	if len(again) > 0 {
		return found, fmt.Errorf("the cache still disagrees with the refs after a rebuild: %s", strings.Join(again, "; "))
	}
	return found, nil
}

// rebuildMemory indexes every memory ref again from nothing (commit
// history and vectors stay: they are keyed by content, not by ref).
func (s *core) rebuildMemory(ctx context.Context) error {
	local, _, err := s.memoryRefs()
	if err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *cache.Tx) error {
		if err := tx.Reset(); err != nil {
			return err
		}
		return s.index().Apply(ctx, tx, map[string]string{}, local)
	})
}
