package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/term"
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

// pager starts git's pager (GIT_PAGER, core.pager, PAGER, less) when out is
// a terminal, and returns the writer to use and a function that waits for
// the pager to exit.
func pager(stdio IO, disabled bool) (io.Writer, func()) {
	if disabled || !stdio.TTY {
		return stdio.Out, func() {}
	}
	p := os.Getenv("GIT_PAGER")
	if p == "" {
		if out, err := exec.Command("git", "config", "core.pager").Output(); err == nil {
			p = strings.TrimSpace(string(out))
		}
	}
	if p == "" {
		p = os.Getenv("PAGER")
	}
	if p == "" {
		p = "less"
	}
	if p == "cat" {
		return stdio.Out, func() {}
	}
	cmd := exec.Command("sh", "-c", p)
	cmd.Stdout, cmd.Stderr = stdio.Out, stdio.Err
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
	return in, func() { in.Close(); cmd.Wait() }
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
