package app

import (
	"errors"
	"fmt"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/history"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
)

// Errors the application returns from the layers below it, under its own
// names, for front ends to test with errors.Is (and map to exit codes).
var (
	ErrNotRepo   = gitstore.ErrNotRepo // not inside a git repository
	ErrNotFound  = cache.ErrNotFound   // no entry has that id
	ErrAmbiguous = cache.ErrAmbiguous  // an id prefix names several entries
	ErrNoWords   = cache.ErrNoWords    // a search with no word to look for
	ErrNoModel   = embed.ErrNoModel    // no embedding model installed
	// ErrNewerCache: the cache was written by a newer git-synaptic (an
	// older binary, or a process started before an upgrade).
	ErrNewerCache = cache.ErrNewerSchema
	ErrSecret     = secrets.ErrSecret // content that looks like a credential
	// ErrNoCommits: the repository has no commits to work on.
	ErrNoCommits = history.ErrNoCommits
	// ErrNoWorkTree: changed files asked of a bare repository (a usage
	// error, exit 2).
	ErrNoWorkTree = history.ErrNoWorkTree
)

// ErrInvalidRequest marks a request the application cannot carry out as
// asked: an argument out of range, an unknown name, two options that do not
// go together, an entry that is read-only here. Front ends map it to a usage
// error (exit 2). Content the application refuses to store (invalid, too
// large, a secret) wraps memory.ErrInvalid instead (exit 4).
var ErrInvalidRequest = errors.New("invalid")

// ErrNotProject is returned when a path to remove is not in the project
// list.
var ErrNotProject = errors.New("not in your projects (see 'git synaptic projects')")

// ErrPinned is returned when an agent archives a pinned entry.
var ErrPinned = errors.New("pinned entries are not archived by agents")

// badRequest marks err, a lower layer's refusal of a value the caller
// gave (an unknown type in a filter), as an invalid request, keeping its
// message.
func badRequest(err error) error {
	if err == nil {
		return nil
	}
	return requestError{err}
}

// Invalidf is badRequest of the error format and args give (%w wraps as
// in fmt.Errorf): a request the application cannot carry out, told
// without the sentinel's word in front of it.
func Invalidf(format string, args ...any) error { return badRequest(fmt.Errorf(format, args...)) }

type requestError struct{ error }

func (e requestError) Unwrap() error        { return e.error }
func (e requestError) Is(target error) bool { return target == ErrInvalidRequest }
