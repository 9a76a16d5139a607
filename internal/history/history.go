// Package history is what git-synaptic knows of the code's history: the
// commit index (commits as searchable entries, with the files each
// touched), the co-change model mined from it, and the git hooks that keep
// them current. It is one of the application's components: internal/app
// builds one per repository and hands it to the front ends as its Code
// part; the index lives in the cache, derived from git, so losing it loses
// nothing a walk cannot find again.
package history

import (
	"context"
	"errors"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
)

// ErrNoCommits is returned when the repository has no commits to work on.
var ErrNoCommits = errors.New("this repository has no commits yet")

// ErrNoWorkTree is returned when a suggestion for the changed files is
// asked of a bare repository, which has none.
var ErrNoWorkTree = errors.New("a bare repository has no changed files to suggest for; name the files (git synaptic suggest --files FILE,...)")

// Repo is the git repository as this component reads it.
type Repo interface {
	Head() (gitstore.Hash, error)
	Unborn() bool
	CurrentBranch() string
	WorkTree() string
	// InProgress names a rebase, merge, cherry-pick... under way ("" when none).
	InProgress() string
	Refs(prefixes ...string) (map[string]gitstore.Hash, error)
	ResolveCommit(ctx context.Context, rev string) (gitstore.Hash, error)
	CountCommits(ctx context.Context, opt gitstore.LogOptions) (int, error)
	History(ctx context.Context, opt gitstore.LogOptions, fn func(gitstore.Commit) error) (exactOnly int, err error)
	ChangedFiles(ctx context.Context, staged bool) ([]string, error)
	DropStaleNote(ctx context.Context, old string) (bool, error)
	HooksDir(ctx context.Context) (string, error)
}

var _ Repo = (*gitstore.Repo)(nil)

// Cache is the cache as this component keeps the commit index in it.
type Cache interface {
	Meta(ctx context.Context, key string) (string, error)
	Update(ctx context.Context, f func(*cache.Tx) error) error
	CommitsState(ctx context.Context) (string, error)
	CountCommits(ctx context.Context) (int, error)
	EachCommit(ctx context.Context, fn func(sha string, t time.Time, files []cache.FileRecord)) error
	EachCommitAfter(ctx context.Context, after string, fn func(sha string, t time.Time, files []cache.FileRecord)) (ok bool, err error)
}

var _ Cache = (*cache.Cache)(nil)

// Options give a Code what it works with.
type Options struct {
	Repo Repo
	// Cache opens the cache as it is, without bringing memory up to the
	// refs (indexing commits is part of doing that).
	Cache func() (Cache, error)
	// Refresh brings memory and the cache up to the refs, commits included:
	// what the post-merge and post-rewrite hooks run.
	Refresh func(ctx context.Context) error
	// Snapshot is the file the co-change model is kept in between
	// commands; as disposable as the cache beside it.
	Snapshot string
	// Progress, if set, is told how far a walk of history again after a
	// rebuild of the cache has got (CatchUp).
	Progress func(done, total int)
}

// Code knows the code's history of one repository: the commit index,
// co-change and the git hooks that keep them current.
type Code struct {
	repo     Repo
	cache    func() (Cache, error)
	refresh  func(ctx context.Context) error
	snapshot string
	progress func(done, total int)
}

// New returns the Code that o describes.
func New(o Options) *Code {
	return &Code{repo: o.Repo, cache: o.Cache, refresh: o.Refresh, snapshot: o.Snapshot, progress: o.Progress}
}

// update runs f in one cache transaction.
func (h *Code) update(ctx context.Context, f func(*cache.Tx) error) error {
	c, err := h.cache()
	if err != nil {
		return err
	}
	return c.Update(ctx, f)
}
