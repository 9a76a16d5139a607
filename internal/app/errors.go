package app

import (
	"errors"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/gitstore"
)

// Errors the application returns from the layers below it, under its own
// names, for front ends to test with errors.Is (and map to exit codes).
var (
	ErrNotRepo   = gitstore.ErrNotRepo // not inside a git repository
	ErrNotFound  = cache.ErrNotFound   // no entry has that id
	ErrAmbiguous = cache.ErrAmbiguous  // an id prefix names several entries
	ErrNoWords   = cache.ErrNoWords    // a search with no word to look for
	ErrNoModel   = embed.ErrNoModel    // no embedding model installed
)

// ErrNotProject is returned when a path to remove is not in the project
// list.
var ErrNotProject = errors.New("not in your projects (see 'git synaptic projects')")

// ErrPinned is returned when an agent archives a pinned entry.
var ErrPinned = errors.New("pinned entries are not archived by agents")
