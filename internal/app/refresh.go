package app

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
)

// memoryRefs are the refs whose memory the cache indexes, by tip.
func (s *core) memoryRefs() (local, tracking map[string]gitstore.Hash, err error) {
	all, err := s.log.Refs(sharedPrefix, privatePrefix, subPrefix, gitstore.NotesRef, remotePrefix)
	if err != nil {
		return nil, nil, err
	}
	local, tracking = map[string]gitstore.Hash{}, map[string]gitstore.Hash{}
	for ref, h := range all {
		switch {
		case ref == gitstore.NotesRef || strings.HasPrefix(ref, sharedPrefix) || strings.HasPrefix(ref, privatePrefix) || strings.HasPrefix(ref, subPrefix):
			local[ref] = h
		case strings.HasPrefix(ref, remotePrefix):
			if _, ok := trackedLocal(ref); ok {
				tracking[ref] = h
			}
		}
	}
	return local, tracking, nil
}

// trackingRef is the remote-tracking ref that remote's copy of local memory
// ref is fetched into (the inverse of trackedLocal): refs/synaptic/X →
// refs/remotes/R/synaptic/X, refs/notes/synaptic →
// refs/remotes/R/notes/synaptic.
func trackingRef(remote, local string) string {
	return remotePrefix + remote + "/" + strings.TrimPrefix(local, "refs/")
}

// trackedLocal maps a remote-tracking memory ref to the local ref it merges
// into: refs/remotes/R/synaptic/X → refs/synaptic/X and
// refs/remotes/R/notes/synaptic → refs/notes/synaptic.
func trackedLocal(ref string) (string, bool) {
	rest := strings.TrimPrefix(ref, remotePrefix)
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", false
	}
	rest = rest[i+1:]
	switch {
	case strings.HasPrefix(rest, "synaptic/"):
		return "refs/" + rest, true
	case rest == "notes/synaptic":
		return gitstore.NotesRef, true
	}
	return "", false
}

const mergedKey = "merged:"

// mergeFetched merges memory that a plain `git fetch` brought into the
// remote-tracking refs since the last command into the local memory refs,
// so it is visible without a sync: it writes refs, and reports whether it
// merged any. The cache remembers what it merged, so this costs nothing
// when nothing arrived; a merge that fails is warned about and not tried
// again for the same tip.
func (s *core) mergeFetched(ctx context.Context, c *cache.Cache, tracking map[string]gitstore.Hash) (moved bool, err error) {
	for ref, h := range tracking {
		done, err := c.Meta(ctx, mergedKey+ref)
		if err != nil {
			return moved, err
		}
		if done == h.String() {
			continue
		}
		local, _ := trackedLocal(ref)
		if _, err := s.mergeRef(ctx, local, h); err != nil {
			s.warnf("cannot merge %s into %s: %v", ref, local, err)
		} else {
			moved = true
		}
		if err := c.SetMeta(ctx, mergedKey+ref, h.String()); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

func (s *core) mergeRef(ctx context.Context, local string, h gitstore.Hash) (gitstore.MergeResult, error) {
	if local == gitstore.NotesRef {
		return s.repo.MergeNotes(ctx, h)
	}
	before, err := s.log.Tip(local)
	if err != nil {
		return "", err
	}
	res, _, err := s.repo.MergeInto(ctx, local, h, s.sig(ctx))
	if err != nil || res == gitstore.MergeUpToDate {
		return res, err
	}
	// A purge on either side: cut what its tombstones cover out of this
	// history, including operations the purging clone never saw.
	_, err = s.applyTombstones(ctx, local, before, h)
	return res, err
}

// ready returns an up-to-date cache, rebuilding it once if it turns out
// to be corrupt. Every command, reads included, goes through it, and it
// may write memory refs:
//
//  1. mergeFetched merges memory that a plain `git fetch` brought into the
//     remote-tracking refs into the local memory refs (merge commits; a
//     teammate's purge cuts history here too), so that fetched memory is
//     visible without a sync.
//  2. the memory log's Index brings the cache up to the memory refs
//     (cache only).
//  3. Code.CatchUp indexes the commits made since the last command (cache only).
func (s *core) ready(ctx context.Context) (*cache.Cache, error) {
	c, err := s.openCache()
	if err != nil {
		return nil, err
	}
	if s.conn.fresh {
		return c, nil
	}
	s.removeStaleLocks()
	refresh := func() error {
		local, tracking, err := s.memoryRefs()
		if err != nil {
			return err
		}
		moved, err := s.mergeFetched(ctx, c, tracking)
		if err != nil {
			return err
		}
		if moved {
			if local, _, err = s.memoryRefs(); err != nil {
				return err
			}
		}
		return s.index().Update(ctx, c, local)
	}
	if err := refresh(); err != nil {
		if !cache.IsCorrupt(err) {
			return nil, err
		}
		if c, err = s.conn.recreate(); err != nil {
			return nil, err
		}
		if err := refresh(); err != nil {
			return nil, err
		}
	}
	// Commits made since the last command; history is derived data, so a
	// failure here is told and the command goes on.
	if err := s.hist.CatchUp(ctx); err != nil && ctx.Err() == nil {
		fmt.Fprintf(s.per.Warn, "warning: indexing new commits: %v\n", err)
	}
	s.conn.fresh = true
	s.judgeRebuilt(ctx, c)
	return c, nil
}

// judgeRebuilt gives every entry of a cache indexed afresh its decay
// verdict (a clone's first command, a reindex, a cache deleted by hand;
// or the next command, when the one that rebuilt was killed before its
// pass), which would otherwise fall to the next agent session start:
// 0.1 s of it at 10k entries, about what git synaptic maintain takes at a
// million (7.8 s). It judges them all, as they all are due: the pass that
// reads them by the index of those due made a reindex's peak RSS about
// 0.1 GB larger at a million. A failure only warns: that session start
// judges them.
func (s *core) judgeRebuilt(ctx context.Context, c *cache.Cache) {
	unjudged, err := c.Unjudged(ctx)
	if err == nil && unjudged {
		_, err = s.memory().maintain(ctx, cache.DecayPass{All: true, Progress: s.per.Judging})
	}
	if err != nil && ctx.Err() == nil {
		s.warnf("judging decay after indexing memory afresh: %v (the next session start does)", err)
	}
}

// withCache runs f against a fresh cache; if the cache turns out corrupt
// midway, it is rebuilt and f runs once more.
func (s *core) withCache(ctx context.Context, f func(*cache.Cache) error) error {
	c, err := s.ready(ctx)
	if err != nil {
		return err
	}
	err = f(c)
	if !cache.IsCorrupt(err) {
		return err
	}
	if _, err := s.conn.recreate(); err != nil {
		return err
	}
	if c, err = s.ready(ctx); err != nil {
		return err
	}
	return f(c)
}

// stale makes the next read refresh the cache from the refs, here and in
// the other projects this Service read; a Session calls it before each
// request, since other processes and git fetch move the refs meanwhile.
func (s *core) stale() {
	s.conn.refsMoved()
	if s.conn.dropIfReplaced() {
		s.recent = nil
	}
	for _, o := range s.others {
		o.stale()
	}
}

// index is what brings the cache up to the memory refs, with this
// request's warnings and progress.
func (s *core) index() *memlog.Index {
	return &memlog.Index{
		Log:       s.repo,
		Warnf:     s.warnf,
		Progress:  s.per.Progress,
		Droppable: func(ref string) bool { return SubscriptionOf(ref) != "" },
		Private:   func(ref string) bool { return strings.HasPrefix(ref, privatePrefix) },
	}
}

// removeStaleLocks deletes the lock files of memory refs that a killed
// process left behind (git would refuse to update those refs), saying so.
func (s *core) removeStaleLocks() {
	for _, l := range s.repo.RemoveStaleLocks(sharedPrefix, privatePrefix, gitstore.NotesRef) {
		s.warnf("removed a stale lock %s (%s old, left by a killed process)", l.Path, l.Age.Round(time.Second))
	}
}

// Reindex deletes the cache and rebuilds it from the refs and the history
// walks that had indexed commits (their tips, read first), and returns how
// many entries it holds. The usage store outlives it, and decay's
// verdicts are computed from it again at once, as after any rebuild
// (judgeRebuilt, told to Options.Judging), so that what decay had
// archived stays archived; so does the vector store, whose vectors the
// entries take back, told to progress (a million entries: about 45 s).
func (s *Recall) Reindex(ctx context.Context, progress ReindexProgress) (int, error) {
	if err := s.reindex(ctx, progress); err != nil {
		return 0, err
	}
	// counted from the type index: Status reads every row and checks the
	// refs again (11 s at a million entries)
	return s.count(ctx)
}

// ReindexProgress is told how far a reindex's step after the rebuild and
// its decay verdicts (Options.Judging) has got (nil: nothing told).
type ReindexProgress struct {
	Restore func(done, total int) // the entries given their stored vectors
}

func (s *Recall) reindex(ctx context.Context, progress ReindexProgress) error {
	// The indexed commits come from git, not from the refs: the walks that
	// indexed them are made again from their tips, or a rebuild would
	// drop them all without a word (12k of them on a clone of tmux).
	walked, err := s.hist.Walked(ctx)
	if err != nil {
		s.warnf("the indexed commits could not be read (%v): run 'git synaptic index' after this", err)
	}
	if err := s.conn.remove(); err != nil {
		return err
	}
	// kept in the new cache first: a rebuild killed midway still walks
	// them, at the next command
	if err := s.hist.WalkAgain(ctx, walked); err != nil {
		s.warnf("the indexed commits will not be indexed again (%v): run 'git synaptic index' after this", err)
	}
	// the rebuild, then the catch-up that walks the history again
	if _, err := s.ready(ctx); err != nil {
		return err
	}
	// The vector store survives the rebuild: the entries take their
	// vectors back now, not in the first search (40 s of it at a million
	// entries). Without a model, the first command that loads one does;
	// without a store, there is nothing to take back nor a model to load.
	if _, err := os.Stat(cache.VectorsPath(s.cachePath())); err != nil {
		return nil
	}
	m, err := s.embedder()
	if err != nil {
		return nil
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if err := c.UseModel(ctx, m.ModelID(), m.Dim()); err != nil {
			return err
		}
		_, err := c.RestoreVectors(ctx, progress.Restore)
		return err
	})
}
