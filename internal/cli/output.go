package cli

import (
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"time"

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

var relRE = regexp.MustCompile(`^(\d+)\s*[. ]?\s*(h|hours?|d|days?|w|weeks?|mo|months?|y|years?|min|minutes?)(\s+ago)?$`)

// parseTime accepts a date (2026-01-31), an RFC 3339 time, or a relative
// age like "3d", "2.weeks", "36 hours ago", "yesterday".
func parseTime(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	switch s {
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case "yesterday":
		y, m, d := now.AddDate(0, 0, -1).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	if m := relRE.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		switch u := m[2]; {
		case strings.HasPrefix(u, "min"):
			return now.Add(-time.Duration(n) * time.Minute), nil
		case strings.HasPrefix(u, "h"):
			return now.Add(-time.Duration(n) * time.Hour), nil
		case strings.HasPrefix(u, "d"):
			return now.AddDate(0, 0, -n), nil
		case strings.HasPrefix(u, "w"):
			return now.AddDate(0, 0, -7*n), nil
		case strings.HasPrefix(u, "mo"):
			return now.AddDate(0, -n, 0), nil
		case strings.HasPrefix(u, "y"):
			return now.AddDate(-n, 0, 0), nil
		}
	}
	return time.Time{}, usagef("cannot read time %q: use a date (2026-01-31), RFC 3339, or an age such as 3d, 2.weeks, 12h", s)
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
