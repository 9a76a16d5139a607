package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/hooks"
)

// Hook runs the work of git hook name (pre-push aside: its front end asks
// PushDue and runs a sync); it never fails git: callers report errors and
// exit 0.
func (s *Code) Hook(ctx context.Context, name string, args []string, stdin string) error {
	if what := s.repo.InProgress(); what != "" && name != "post-rewrite" {
		return nil // the sequence's end (post-rewrite) indexes the result
	}
	switch name {
	case "post-commit", "post-checkout":
		// (post-checkout: a hook of earlier versions)
		return s.catchUp(ctx)
	case "post-merge":
		// memory a pull fetched is merged, and the commits indexed
		_, err := s.ready(ctx)
		return err
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
		err := s.inTx(ctx, func(tx *cache.Tx) error {
			for _, o := range olds {
				if err := tx.DeleteCommit(o); err != nil {
					return err
				}
			}
			_, _, _, err := s.logInto(ctx, tx, gitstore.LogOptions{Revs: news, NoWalk: true}, s.repo.CurrentBranch(), nil)
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
			if _, err := s.repo.DropStaleNote(ctx, o); err != nil {
				return err
			}
		}
		_, err = s.ready(ctx)
		return err
	}
	return fmt.Errorf("unknown hook %q (want one of %s)", name, strings.Join(hooks.Names, ", "))
}

// catchUpWalk bounds the commits a command indexes on its way; a longer
// stretch of new history waits for git synaptic index.
const catchUpWalk = 1000

// catchUp indexes the commits HEAD gained since the last complete walk,
// so that commits made, merged or checked out since are searchable
// without a git hook on git's hot path. It costs nothing when HEAD has
// not moved, and nothing where history was never indexed (git synaptic
// index starts that).
func (s *core) catchUp(ctx context.Context) error {
	if s.repo.Unborn() {
		return nil
	}
	c, err := s.openCache()
	if err != nil {
		return err
	}
	if known, err := c.Meta(ctx, historyTipsKey); err != nil || known == "" {
		return err
	}
	_, err = s.code().Index(ctx, IndexOptions{Max: catchUpWalk})
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
func (s *Code) InstallHooks(ctx context.Context) (HooksReport, error) {
	return s.onHooks(ctx, hooks.Install)
}

// UninstallHooks removes the git hooks, restoring chained ones.
func (s *Code) UninstallHooks(ctx context.Context) (HooksReport, error) {
	return s.onHooks(ctx, hooks.Uninstall)
}

// HooksStatus describes the installed hooks.
func (s *Code) HooksStatus(ctx context.Context) (HooksReport, error) {
	return s.onHooks(ctx, func(dir string) (hooks.Report, error) { return hooks.Report{Dir: dir, Actions: hooks.Status(dir)}, nil })
}

// onHooks runs f on the repository's hooks directory.
func (s *Code) onHooks(ctx context.Context, f func(dir string) (hooks.Report, error)) (HooksReport, error) {
	dir, err := s.repo.HooksDir(ctx)
	if err != nil {
		return HooksReport{}, err
	}
	rep, err := f(dir)
	return HooksReport(rep), err
}
