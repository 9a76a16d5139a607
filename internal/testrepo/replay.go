package testrepo

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/evaldata"
)

// Replay writes commits into the repository at dir with git fast-import on
// branch main: each commit changes its files (contents made up), with the
// recorded author and time.
func Replay(t testing.TB, dir string, commits []evaldata.Commit) {
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
