package app

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
)

// A project is known by its history, not by its folder or its remote's
// base name: two clones of one repository are one project, wherever they
// are and whatever their remotes are called.

// rootsKey caches the root commits in the cache's metadata: finding them
// walks the whole history.
const rootsKey = "root-commits"

// rootsTimeout bounds that walk; past it, the remotes alone identify the
// project.
const rootsTimeout = 2 * time.Second

// projectKeys identify this project: its history's root commits and its
// remotes' URLs, each in one spelling. Two projects sharing a key are
// the same project.
func (s *core) projectKeys(ctx context.Context) []string {
	var keys []string
	if remotes, err := s.repo.Remotes(ctx); err == nil {
		for _, r := range remotes {
			if u := s.repo.RemoteURL(r); u != "" {
				keys = append(keys, "url "+canonicalURL(u, s.repo.WorkTree()))
			}
		}
	}
	_ = s.withCache(ctx, func(c *cache.Cache) error {
		roots, err := c.Meta(ctx, rootsKey)
		if err == nil && roots == "" {
			rctx, cancel := context.WithTimeout(ctx, rootsTimeout)
			defer cancel()
			hs, err := s.repo.RootCommits(rctx)
			if err != nil {
				return nil
			}
			var ids []string
			for _, h := range hs {
				ids = append(ids, h.String())
			}
			roots = strings.Join(ids, " ")
			if roots != "" {
				_ = c.SetMeta(ctx, rootsKey, roots)
			}
		}
		for _, r := range strings.Fields(roots) {
			keys = append(keys, "root "+r)
		}
		return nil
	})
	return keys
}

// sameProject reports whether two projects' keys meet.
func sameProject(a, b []string) bool {
	for _, k := range a {
		if slices.Contains(b, k) {
			return true
		}
	}
	return false
}
