package app

import (
	"context"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/history"
)

// What the Code part (internal/history) takes and gives, under the
// application's names.
type (
	// IndexOptions select which history Code.Index walks.
	IndexOptions = history.IndexOptions
	// IndexReport says what Code.Index did.
	IndexReport = history.IndexReport
	// SuggestRequest asks Code.Suggest what else usually changes with
	// some files.
	SuggestRequest = history.SuggestRequest
	// HooksReport says what installing or removing the git hooks did, or
	// how they stand.
	HooksReport = history.HooksReport
)

// GitHooks are the git hooks git-synaptic uses, in the order status lists
// them.
func GitHooks() []string { return history.GitHooks() }

// headFiles are the files of the last commit: from the cache when it is
// indexed (a git log less), else from git.
func (s *core) headFiles(ctx context.Context) []string {
	var files []string
	if head, err := s.repo.Head(); err == nil {
		var indexed bool
		_ = s.withCache(ctx, func(c *cache.Cache) error {
			recs, ok, err := c.CommitFiles(ctx, head.String())
			for _, f := range recs {
				files = append(files, f.Path)
			}
			indexed = ok
			return err
		})
		if indexed {
			return files
		}
	}
	files = nil
	_, _ = s.repo.History(ctx, gitstore.LogOptions{Revs: []string{"HEAD"}, Max: 1}, func(c gitstore.Commit) error {
		for _, f := range c.Files {
			files = append(files, f.Path)
		}
		return nil
	})
	return files
}
