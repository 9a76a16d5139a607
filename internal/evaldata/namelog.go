// Package evaldata reads the evaluation data sets in ../shared/eval for the
// benchmarks, evaluations and tests that replay them.
package evaldata

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Commit is a commit of a recorded history.
type Commit struct {
	ID     string
	Time   int64 // unix seconds
	Author string
	Files  []string // every file the commit touched (new names of renamed files)
	// Renames and Deleted come from --name-status logs only.
	Renames []Rename
	Deleted []string
}

// Rename is a file a commit renamed.
type Rename struct{ From, To string }

// ReadNameOnlyLog parses `git log --no-renames --name-only
// --format=--%H--%ct--%an` output, or the same with --name-status (-M)
// instead of --name-only (gzip ok). It returns the commits oldest first,
// merges (no files) dropped, at most limit of them counted from the oldest
// (0: all). Paths git quoted are unquoted.
func ReadNameOnlyLog(path string, limit int) ([]Commit, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			return nil, err
		}
	}
	var out []Commit
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "--") && strings.Count(line, "--") >= 3 {
			p := strings.SplitN(line[2:], "--", 3)
			ts, err := strconv.ParseInt(p[1], 10, 64)
			if err != nil {
				return nil, err
			}
			out = append(out, Commit{ID: p[0], Time: ts, Author: p[2]})
		} else if line != "" && len(out) > 0 {
			if err := addFile(&out[len(out)-1], line); err != nil {
				return nil, err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	kept := make([]Commit, 0, len(out))
	for i := len(out) - 1; i >= 0; i-- { // the log is newest first
		if len(out[i].Files) > 0 {
			kept = append(kept, out[i])
		}
	}
	if limit > 0 && len(kept) > limit {
		kept = kept[:limit]
	}
	return kept, nil
}

// addFile adds a --name-only or --name-status line to c.
func addFile(c *Commit, line string) error {
	status, rest, ok := strings.Cut(line, "\t")
	if !ok || status == "" || !strings.ContainsRune("ACDMRTUX", rune(status[0])) || strings.Trim(status[1:], "0123456789") != "" {
		c.Files = append(c.Files, unquote(line))
		return nil
	}
	paths := strings.Split(rest, "\t")
	for i := range paths {
		paths[i] = unquote(paths[i])
	}
	switch {
	case (status[0] == 'R' || status[0] == 'C') && len(paths) == 2:
		c.Files = append(c.Files, paths[1])
		if status[0] == 'R' {
			c.Renames = append(c.Renames, Rename{From: paths[0], To: paths[1]})
		}
	case len(paths) == 1:
		c.Files = append(c.Files, paths[0])
		if status[0] == 'D' {
			c.Deleted = append(c.Deleted, paths[0])
		}
	default:
		return fmt.Errorf("unexpected --name-status line %q", line)
	}
	return nil
}

// unquote undoes git's quoting of a path with special characters.
func unquote(p string) string {
	if strings.HasPrefix(p, `"`) {
		if u, err := strconv.Unquote(p); err == nil {
			return u
		}
	}
	return p
}

// quote quotes a path as git does where it holds a tab, a newline, a
// quote or a backslash, so that it reads back whole.
func quote(p string) string {
	if strings.ContainsAny(p, "\t\n\"\\") {
		return strconv.Quote(p)
	}
	return p
}

// WriteNameStatusLog writes commits (oldest first) as ReadNameOnlyLog reads
// a --name-status log: newest first, "R" lines for renames, "D" for
// deletions and "M" for every other file.
func WriteNameStatusLog(w io.Writer, commits []Commit) error {
	bw := bufio.NewWriter(w)
	for i := len(commits) - 1; i >= 0; i-- {
		c := commits[i]
		fmt.Fprintf(bw, "--%s--%d--%s\n\n", c.ID, c.Time, c.Author)
		from := map[string]string{}
		for _, r := range c.Renames {
			from[r.To] = r.From
		}
		deleted := map[string]bool{}
		for _, d := range c.Deleted {
			deleted[d] = true
		}
		for _, f := range c.Files {
			switch {
			case from[f] != "":
				fmt.Fprintf(bw, "R\t%s\t%s\n", quote(from[f]), quote(f))
			case deleted[f]:
				fmt.Fprintf(bw, "D\t%s\n", quote(f))
			default:
				fmt.Fprintf(bw, "M\t%s\n", quote(f))
			}
		}
		bw.WriteString("\n")
	}
	return bw.Flush()
}
