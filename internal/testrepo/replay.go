package testrepo

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// LogCommit is a commit of a recorded history: `git log --name-only
// --format=--%H--%ct--%an`.
type LogCommit struct {
	Time   int64
	Author string
	Files  []string
}

// ReadNameOnlyLog parses such a log (gzip ok), oldest first, merges (no
// files) dropped, at most limit commits (0: all) counted from the oldest.
func ReadNameOnlyLog(path string, limit int) ([]LogCommit, error) {
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
	var out []LogCommit
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "--") && strings.Count(line, "--") >= 3 {
			p := strings.SplitN(line[2:], "--", 3)
			ts, _ := strconv.ParseInt(p[1], 10, 64)
			out = append(out, LogCommit{Time: ts, Author: p[2]})
		} else if line != "" && len(out) > 0 {
			out[len(out)-1].Files = append(out[len(out)-1].Files, line)
		}
	}
	kept := out[:0]
	for i := len(out) - 1; i >= 0; i-- { // log is newest first
		if len(out[i].Files) > 0 {
			kept = append(kept, out[i])
		}
	}
	if limit > 0 && len(kept) > limit {
		kept = kept[:limit]
	}
	return kept, sc.Err()
}

// Replay writes commits into the repository at dir with git fast-import on
// branch main: each commit changes its files (contents made up), with the
// recorded author and time.
func Replay(t testing.TB, dir string, commits []LogCommit) {
	t.Helper()
	cmd := exec.Command("git", "fast-import", "--quiet", "--force")
	cmd.Dir = dir
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(in)
	for i, c := range commits {
		fmt.Fprintf(w, "commit refs/heads/main\nmark :%d\n", i+1)
		name := strings.ReplaceAll(c.Author, "<", "")
		fmt.Fprintf(w, "author %s <%s@example.com> %d +0000\n", name, strings.ReplaceAll(name, " ", "."), c.Time)
		fmt.Fprintf(w, "committer %s <%s@example.com> %d +0000\n", name, strings.ReplaceAll(name, " ", "."), c.Time)
		msg := fmt.Sprintf("replayed commit %d touching %d files", i+1, len(c.Files))
		fmt.Fprintf(w, "data %d\n%s\n", len(msg), msg)
		if i > 0 {
			fmt.Fprintf(w, "from :%d\n", i)
		}
		for _, f := range c.Files {
			body := fmt.Sprintf("%s changed by commit %d\n", f, i+1)
			fmt.Fprintf(w, "M 100644 inline %s\ndata %d\n%s\n", quotePath(f), len(body), body)
		}
		w.WriteString("\n")
	}
	w.Flush()
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fast-import: %v", err)
	}
	Git(t, dir, "reset", "-q", "--hard", "main")
}

func quotePath(p string) string {
	if strings.ContainsAny(p, "\" \n\\") {
		return strconv.Quote(p)
	}
	return p
}
