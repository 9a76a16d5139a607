package history

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/hooks"
)

// Hook runs the work of git hook name (pre-push aside: its front end asks
// PushDue and runs a sync); it never fails git: callers report errors and
// exit 0.
func (h *Code) Hook(ctx context.Context, name string, args []string, stdin string) error {
	if what := h.repo.InProgress(); what != "" && name != "post-rewrite" {
		return nil // the sequence's end (post-rewrite) indexes the result
	}
	switch name {
	case "post-commit", "post-checkout":
		// (post-checkout: a hook of earlier versions)
		return h.CatchUp(ctx)
	case "post-merge":
		// memory a pull fetched is merged, and the commits indexed
		return h.refresh(ctx)
	case "post-rewrite":
		var olds, news []string
		for _, line := range strings.Split(stdin, "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && len(f[0]) == 40 && len(f[1]) == 40 {
				olds, news = append(olds, f[0]), append(news, f[1])
			}
		}
		if len(news) == 0 {
			return nil
		}
		err := h.update(ctx, func(tx *cache.Tx) error {
			for _, o := range olds {
				if err := tx.DeleteCommit(o); err != nil {
					return err
				}
			}
			_, _, _, err := h.logInto(ctx, tx, gitstore.LogOptions{Revs: news, NoWalk: true}, h.repo.CurrentBranch(), nil)
			return err
		})
		if err != nil {
			return err
		}
		// git copied the notes of rewritten commits (notes.rewriteRef);
		// drop the copies left on commits nothing points to any more.
		for i, o := range olds {
			if i == 200 {
				break
			}
			if _, err := h.repo.DropStaleNote(ctx, o); err != nil {
				return err
			}
		}
		return h.refresh(ctx)
	}
	return fmt.Errorf("unknown hook %q (want one of %s)", name, strings.Join(hooks.Names, ", "))
}

// catchUpWalk bounds the commits a command indexes on its way; a longer
// stretch of new history waits for git synaptic index.
const catchUpWalk = 1000

// CatchUp indexes the commits HEAD gained since the last complete walk,
// so that commits made, merged or checked out since are searchable
// without a git hook on git's hot path. It costs nothing when HEAD has
// not moved, and nothing where history was never indexed (git synaptic
// index starts that). After a rebuild of the cache it first walks again
// the history that had been indexed (WalkAgain).
func (h *Code) CatchUp(ctx context.Context) error {
	if h.repo.Unborn() {
		return nil
	}
	c, err := h.cache()
	if err != nil {
		return err
	}
	again, err := c.Meta(ctx, rewalkKey)
	if err != nil {
		return err
	}
	if again != "" {
		_, err := h.Index(ctx, IndexOptions{From: strings.Fields(again), Progress: h.progress, Tune: true})
		// walked (or found walked), or none of the tips is left to walk
		// from: nothing to ask again
		if err == nil || errors.Is(err, ErrNoCommits) {
			return c.Update(ctx, func(tx *cache.Tx) error { return tx.SetMeta(rewalkKey, "") })
		}
		return err
	}
	if known, err := c.Meta(ctx, historyTipsKey); err != nil || known == "" {
		return err
	}
	_, err = h.Index(ctx, IndexOptions{Max: catchUpWalk})
	return err
}

// GitHooks are the git hooks git-synaptic uses, in the order status lists
// them.
func GitHooks() []string { return append([]string(nil), hooks.Names...) }

// HooksReport says what installing or removing the git hooks did, or how
// they stand: the hooks directory, and each hook's action or state.
type HooksReport struct {
	Dir     string            `json:"dir"`
	Actions map[string]string `json:"actions"`
}

// InstallHooks installs the git hooks (see package hooks).
func (h *Code) InstallHooks(ctx context.Context) (HooksReport, error) {
	return h.onHooks(ctx, hooks.Install)
}

// UninstallHooks removes the git hooks, restoring chained ones.
func (h *Code) UninstallHooks(ctx context.Context) (HooksReport, error) {
	return h.onHooks(ctx, hooks.Uninstall)
}

// HooksStatus describes the installed hooks.
func (h *Code) HooksStatus(ctx context.Context) (HooksReport, error) {
	return h.onHooks(ctx, func(dir string) (hooks.Report, error) { return hooks.Report{Dir: dir, Actions: hooks.Status(dir)}, nil })
}

// onHooks runs f on the repository's hooks directory.
func (h *Code) onHooks(ctx context.Context, f func(dir string) (hooks.Report, error)) (HooksReport, error) {
	dir, err := h.repo.HooksDir(ctx)
	if err != nil {
		return HooksReport{}, err
	}
	rep, err := f(dir)
	return HooksReport(rep), err
}
