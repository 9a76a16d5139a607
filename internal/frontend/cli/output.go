package cli

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"

	"golang.org/x/term"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// pager starts the pager git would use in the repository (Service.Pager)
// when out is a terminal, and returns the writer to use and a function
// that waits for the pager to exit.
func pager(ctx context.Context, s *app.Service, stdio IO, disabled bool) (io.Writer, func()) {
	if disabled || !stdio.TTY {
		return stdio.Out, func() {}
	}
	p := s.Pager(ctx)
	if p == "cat" || p == "" {
		return stdio.Out, func() {}
	}
	cmd := exec.Command("sh", "-c", p)
	cmd.Stdout, cmd.Stderr = unwrapped(stdio.Out), unwrapped(stdio.Err)
	cmd.Env = os.Environ()
	if os.Getenv("LESS") == "" {
		cmd.Env = append(cmd.Env, "LESS=FRX")
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return stdio.Out, func() {}
	}
	if err := cmd.Start(); err != nil {
		return stdio.Out, func() {}
	}
	return visible{in}, func() { in.Close(); cmd.Wait() }
}

const (
	yellow = "\x1b[33m"
	dim    = "\x1b[2m"
	reset  = "\x1b[0m"
)

func colour(on bool, code, s string) string {
	if !on || os.Getenv("NO_COLOR") != "" {
		return s
	}
	return code + s + reset
}

// nonNil makes a nil list print as [] in JSON, not null.
func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
