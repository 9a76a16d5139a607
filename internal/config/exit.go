package config

import (
	"context"
	"errors"

	"github.com/git-synaptic/git-synaptic/internal/agentsetup"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Exit codes. Every error of both programs is mapped by ExitCode and
// nowhere else.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // the command could not do its job (git, I/O, network)
	ExitUsage       = 2   // bad flags, arguments or requests
	ExitNotFound    = 3   // no such entry, ambiguous prefix, no remote
	ExitRefused     = 4   // content refused: invalid, too large, looks like a secret
	ExitUnsupported = 5   // memory, or the cache, written by a newer git-synaptic
	ExitNotRepo     = 128 // not inside a git repository (as git)
	ExitInterrupted = 130 // cancelled by an interrupt (as a shell reports SIGINT)
)

// ExitCode maps an error to the process exit code. usage says the front
// end found the command line itself wrong.
func ExitCode(err error, usage bool) int {
	switch {
	case err == nil:
		return ExitOK
	case usage, errors.Is(err, app.ErrInvalidRequest), errors.Is(err, app.ErrNoWords), errors.Is(err, app.ErrNoWorkTree):
		return ExitUsage
	case errors.Is(err, app.ErrNotRepo):
		return ExitNotRepo
	case errors.Is(err, app.ErrNotFound), errors.Is(err, app.ErrAmbiguous), errors.Is(err, app.ErrNoRemote), errors.Is(err, app.ErrNoCommits), errors.Is(err, app.ErrNoModel), errors.Is(err, app.ErrNotProject), errors.Is(err, app.ErrNoSubscription):
		return ExitNotFound
	case errors.Is(err, memory.ErrUnsupportedVersion), errors.Is(err, app.ErrNewerCache):
		return ExitUnsupported
	case errors.Is(err, memory.ErrInvalid), errors.Is(err, app.ErrSecret), errors.Is(err, agentsetup.ErrConfig):
		return ExitRefused
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	return ExitFailure
}
