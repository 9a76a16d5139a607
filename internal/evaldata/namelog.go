// Package evaldata reads the evaluation data sets in ../shared/eval for the
// benchmarks, evaluations and tests that replay them.
package evaldata

import (
	"bufio"
	"compress/gzip"
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
	Files  []string
}

// ReadNameOnlyLog parses `git log --no-renames --name-only
// --format=--%H--%ct--%an` output (gzip ok). It returns the commits oldest
// first, merges (no files) dropped, at most limit of them counted from the
// oldest (0: all).
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
			out[len(out)-1].Files = append(out[len(out)-1].Files, line)
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
