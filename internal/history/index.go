package history

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/gitstore"
)

const historyTipsKey = "history:tips"

// rewalkKey names the tips a rebuilt cache has yet to walk again
// (WalkAgain): written into the new cache before its rebuild, so that a
// rebuild killed midway walks them at the next command (CatchUp).
const rewalkKey = "history:rewalk"

// IndexOptions select which history Index walks.
type IndexOptions struct {
	All      bool      // every local branch
	Branch   string    // one branch (default: HEAD)
	From     []string  // the tips of earlier complete walks (Walked), walked again
	Since    time.Time // only commits after this
	Max      int       // at most this many commits (0: no limit)
	Progress func(done, total int)
	// Tune re-tunes the co-change ranking on this repository's own recent
	// commits when new commits came (see Code.tune).
	Tune bool
}

// IndexReport says what Index did.
type IndexReport struct {
	Indexed int           `json:"indexed"`
	Seen    int           `json:"seen"`
	Revs    []string      `json:"revs"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// ExactRenamesOnly counts commits whose renamed files were followed only
	// where the content did not change: their contents are missing here (a
	// partial clone, or a copy without its largest files).
	ExactRenamesOnly int `json:"exact_renames_only,omitempty"`
	// Tuning is the co-change ranking's self-tuning, when this run did it.
	Tuning *cochange.Tuning `json:"tuning,omitempty"`
}

// Index adds commits of the history to the cache as searchable git_commit
// entries (derived data: the history stays the truth) with their files for
// co-change mining. Commits already indexed are skipped, and the tips of
// earlier complete walks bound the walk, so a run with nothing new costs no
// git call at all.
func (h *Code) Index(ctx context.Context, opt IndexOptions) (IndexReport, error) {
	start := time.Now()
	rep := IndexReport{}
	c, err := h.cache()
	if err != nil {
		return rep, err
	}
	tips, err := h.indexTips(ctx, opt)
	if err != nil {
		return rep, err
	}
	rep.Revs = tips.names
	known, err := c.Meta(ctx, historyTipsKey)
	if err != nil {
		return rep, err
	}
	if covered(tips.ids, strings.Fields(known)) {
		rep.Elapsed = time.Since(start)
		return rep, nil
	}
	// Tips git no longer has (pruned after a rewrite) are ignored by git
	// (LogOptions.Exclude); asking go-git first would read the whole pack
	// index on every catch-up (30 ms on hugo).
	var exclude []string
	for _, k := range strings.Fields(known) {
		if len(k) == 40 {
			exclude = append(exclude, k)
		}
	}
	lo := gitstore.LogOptions{Revs: tips.ids, Exclude: exclude, Since: opt.Since, Max: opt.Max}
	total := 0
	if opt.Progress != nil {
		if total, err = h.repo.CountCommits(ctx, lo); err != nil {
			return rep, err
		}
		opt.Progress(0, total)
	}
	branch := h.repo.CurrentBranch()
	if opt.Branch != "" {
		branch = opt.Branch
	}
	err = h.update(ctx, func(tx *cache.Tx) error {
		var err error
		rep.Seen, rep.Indexed, rep.ExactRenamesOnly, err = h.logInto(ctx, tx, lo, branch, func(seen int) {
			if opt.Progress != nil && seen%500 == 0 {
				opt.Progress(seen, total)
			}
		})
		// A walk that ended by itself covered everything the tips reach.
		if err != nil || !opt.Since.IsZero() || opt.Max != 0 && rep.Seen >= opt.Max {
			return err
		}
		return tx.SetMeta(historyTipsKey, mergeTips(exclude, tips.ids))
	})
	if err != nil {
		return rep, err
	}
	if opt.Progress != nil {
		opt.Progress(rep.Seen, max(total, rep.Seen))
	}
	if opt.Tune && rep.Indexed > 0 {
		if rep.Tuning, err = h.tune(ctx); err != nil {
			return rep, err
		}
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

// walkTips are the commits an Index walk starts from, and their names.
type walkTips struct{ names, ids []string }

// indexTips resolves what opt walks: HEAD and branches are read from
// git's files, anything else through git.
func (h *Code) indexTips(ctx context.Context, opt IndexOptions) (walkTips, error) {
	var t walkTips
	switch {
	case len(opt.From) > 0:
		for _, id := range opt.From {
			if len(id) != 40 {
				continue
			}
			// a tip git no longer has (pruned after a rewrite) is left out
			if c, err := h.repo.ResolveCommit(ctx, id); err == nil {
				t.names, t.ids = append(t.names, id[:12]), append(t.ids, c.String())
			}
		}
	case opt.All:
		refs, err := h.repo.Refs("refs/heads/")
		if err != nil {
			return t, err
		}
		for ref, h := range refs {
			t.names = append(t.names, strings.TrimPrefix(ref, "refs/heads/"))
			t.ids = append(t.ids, h.String())
		}
	case opt.Branch != "":
		h, err := h.repo.ResolveCommit(ctx, opt.Branch)
		if ctx.Err() != nil {
			return t, ctx.Err() // cancelled: say so, not "no commits"
		}
		if err != nil {
			return t, fmt.Errorf("%w: %v", ErrNoCommits, err)
		}
		t.names, t.ids = []string{opt.Branch}, []string{h.String()}
	default:
		h, err := h.repo.Head()
		if err != nil || h.IsZero() {
			return t, ErrNoCommits
		}
		t.names, t.ids = []string{"HEAD"}, []string{h.String()}
	}
	if len(t.ids) == 0 {
		return t, ErrNoCommits
	}
	return t, nil
}

// Walked returns the tips the complete walks of Index started from, as
// the cache holds them (none when history was never indexed in full):
// the history to walk again (IndexOptions.From) when the cache is
// rebuilt.
func (h *Code) Walked(ctx context.Context) ([]string, error) {
	c, err := h.cache()
	if err != nil {
		return nil, err
	}
	known, err := c.Meta(ctx, historyTipsKey)
	return strings.Fields(known), err
}

// WalkAgain records tips (Walked's, read before the cache was deleted)
// in the new cache for the next CatchUp to walk again.
func (h *Code) WalkAgain(ctx context.Context, tips []string) error {
	if len(tips) == 0 {
		return nil
	}
	c, err := h.cache()
	if err != nil {
		return err
	}
	return c.Update(ctx, func(tx *cache.Tx) error { return tx.SetMeta(rewalkKey, strings.Join(tips, " ")) })
}

// covered reports whether every tip is one an earlier complete walk
// started from.
func covered(tips, known []string) bool {
	for _, t := range tips {
		if !slices.Contains(known, t) {
			return false
		}
	}
	return true
}

func mergeTips(a, b []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range append(append([]string(nil), a...), b...) {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	// Bound the list: old tips are almost always ancestors of newer ones.
	if len(out) > 64 {
		out = out[len(out)-64:]
	}
	return strings.Join(out, " ")
}

// logInto indexes the commits lo selects into tx; it reports how many it
// walked, how many were new and how many had their renames followed only
// where content was unchanged. each, if set, sees the running count.
func (h *Code) logInto(ctx context.Context, tx *cache.Tx, lo gitstore.LogOptions, branch string, each func(seen int)) (seen, added, exactRenames int, err error) {
	exactRenames, err = h.repo.History(ctx, lo, func(gc gitstore.Commit) error {
		seen++
		if each != nil {
			each(seen)
		}
		rec := cache.CommitRecord{SHA: gc.SHA, Author: gc.Author, Message: gc.Message, Branch: branch, Time: gc.Time, Merge: len(gc.Parents) > 1}
		for _, f := range gc.Files {
			rec.Files = append(rec.Files, cache.FileRecord{Path: f.Path, OldPath: f.OldPath, Deleted: f.Deleted})
		}
		isNew, err := tx.PutCommit(rec)
		if isNew {
			added++
		}
		return err
	})
	return seen, added, exactRenames, err
}
