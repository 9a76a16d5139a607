package cli

import (
	"context"
	"errors"

	"github.com/git-synaptic/git-synaptic/internal/agentsetup"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/notes"
)

// Exit codes. Every command's error is mapped here and nowhere else.
const (
	ExitOK          = 0   // success
	ExitFailure     = 1   // the command could not do its job (git, I/O, network)
	ExitUsage       = 2   // bad flags, arguments or requests
	ExitNotFound    = 3   // no such entry, ambiguous prefix, no remote
	ExitRefused     = 4   // content refused: invalid, too large, looks like a secret
	ExitUnsupported = 5   // memory written by a newer git-synaptic
	ExitNotRepo     = 128 // not inside a git repository (as git)
)

// usageError marks bad command-line use.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// ExitCode maps an error to the process exit code.
func ExitCode(err error) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, new(usageError)), errors.Is(err, app.ErrInvalidRequest), errors.Is(err, app.ErrNoWords):
		return ExitUsage
	case errors.Is(err, app.ErrNotRepo):
		return ExitNotRepo
	case errors.Is(err, app.ErrNotFound), errors.Is(err, app.ErrAmbiguous), errors.Is(err, app.ErrNoRemote), errors.Is(err, app.ErrNoCommits), errors.Is(err, app.ErrNoModel), errors.Is(err, app.ErrNotProject), errors.Is(err, app.ErrNoSubscription):
		return ExitNotFound
	case errors.Is(err, notes.ErrUnsupportedVersion):
		return ExitUnsupported
	case errors.Is(err, notes.ErrInvalid), errors.Is(err, secrets.ErrSecret), errors.Is(err, agentsetup.ErrConfig):
		return ExitRefused
	case errors.Is(err, context.Canceled):
		return 130
	}
	return ExitFailure
}
