package cli

import (
	"errors"

	"github.com/git-synaptic/git-synaptic/internal/config"
)

// usageError marks bad command-line use.
type usageError struct{ error }

func (u usageError) Unwrap() error { return u.error }

// ExitCode maps an error to the process exit code: config.ExitCode, with
// the CLI's own usage errors.
func ExitCode(err error) int { return config.ExitCode(err, errors.As(err, new(usageError))) }
