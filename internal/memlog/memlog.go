// Package memlog is memory's log as the application stores it: refs whose
// commits each add documents to a tree of files, read back by what
// changed between two commits. Store is the narrow storage the
// application's memory log needs; gitstore.Repo is the real one, Memory
// an in-memory one, and memlogtest the behaviour both show (run against
// each by this package's tests), as go-git's storage/test and git-bug's
// RepoTest pin theirs. Index brings the cache up to the log: the
// entries, operations and commit notes of each ref, read by what changed
// since the tips the cache indexed.
package memlog

import (
	"context"

	"github.com/git-synaptic/git-synaptic/gitstore"
)

// Store keeps refs of commits of files.
type Store interface {
	// Tip returns the commit ref points at, ZeroHash when there is none.
	Tip(ref string) (gitstore.Hash, error)
	// Refs lists the refs under the prefixes (one ending in "/" names a
	// directory of refs, any other one ref) with their commits.
	Refs(prefixes ...string) (map[string]gitstore.Hash, error)
	// Append adds files to the tree of ref's commit (an empty tree when
	// there is none), replacing those at the same paths, in a new commit
	// that ref then points at, retrying when the ref moves meanwhile; it
	// returns the commit and its parent (ZeroHash for the first).
	Append(ctx context.Context, ref string, files []gitstore.File, sig gitstore.Signature, msg string) (commit, parent gitstore.Hash, err error)
	// Diff lists the files that differ between the trees of two commits
	// (oldCommit may be ZeroHash): each with its new blob, or its old one
	// and Deleted when newCommit's tree lacks it.
	Diff(oldCommit, newCommit gitstore.Hash) ([]gitstore.Change, error)
	// ReadBlob returns the data of blob h, an error for blobs over max
	// bytes and for hashes that name no blob.
	ReadBlob(h gitstore.Hash, max int64) ([]byte, error)
	// CompareAndSwap points ref at newHash if it points at old (ZeroHash:
	// if it does not exist), else returns an error wrapping
	// gitstore.ErrConflict.
	CompareAndSwap(ctx context.Context, ref string, newHash, old gitstore.Hash) error
}

var (
	_ Store  = (*gitstore.Repo)(nil)
	_ Source = (*Memory)(nil)
)
