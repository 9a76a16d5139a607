package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// bin is the git-synaptic binary built once for all end-to-end tests, and
// manpagesBin the man page generator that make install runs.
var bin, manpagesBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "synaptic-bin")
	if err != nil {
		panic(err)
	}
	if manpagesBin, err = testrepo.BuildCommand("../..", dir, "./internal/manpages", "manpages"); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build manpages:", err)
		os.Exit(2)
	}
	if bin, err = testrepo.BuildBinary("../..", dir); err != nil {
		fmt.Fprintln(os.Stderr, "cannot build git-synaptic:", err)
		os.Exit(2)
	}
	os.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	cleanup := testrepo.Isolate() // after the build, which needs the real HOME's Go caches
	code := m.Run()
	os.RemoveAll(dir)
	cleanup()
	os.Exit(code)
}

type result struct {
	out, err string
	code     int
}

// run runs the real binary in dir with stdin and returns what it printed.
func run(t testing.TB, dir, stdin string, args ...string) result {
	t.Helper()
	return runWith(t, dir, stdin, nil, args...)
}

// runEnv is run with extra environment variables and no stdin.
func runEnv(t testing.TB, dir string, env []string, args ...string) result {
	t.Helper()
	return runWith(t, dir, "", env, args...)
}

func runWith(t testing.TB, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	r, err := testrepo.RunBinary(bin, dir, stdin, env, args...)
	if err != nil {
		t.Fatalf("run %v: %v", args, err)
	}
	if strings.Contains(r.Err, "panic") || strings.Contains(r.Err, "goroutine ") {
		t.Fatalf("git-synaptic %v panicked:\n%s", args, r.Err)
	}
	return result{r.Out, r.Err, r.Code}
}

// ok runs the binary and fails the test unless it exits 0.
func ok(t testing.TB, dir string, args ...string) string {
	t.Helper()
	r := run(t, dir, "", args...)
	if r.code != 0 {
		t.Fatalf("git-synaptic %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.out, r.err)
	}
	return r.out
}

// save saves content and returns the new id.
func save(t testing.TB, dir, content string, args ...string) string {
	t.Helper()
	id := strings.TrimSpace(ok(t, dir, append([]string{"save", content}, args...)...))
	if len(id) != 32 {
		t.Fatalf("save printed %q, want a 32-digit id", id)
	}
	return id
}

type row struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Content  string   `json:"content"`
	Tags     []string `json:"tags"`
	Tier     string   `json:"tier"`
	Pinned   bool     `json:"pinned"`
	Archived bool     `json:"archived"`
	Private  bool     `json:"private"`
	Author   string   `json:"author"`
	Edits    int      `json:"edits"`
	Source   string   `json:"source"`
	Commit   string   `json:"commit"`
	Session  string   `json:"session_id"`
}

func listJSON(t testing.TB, dir string, args ...string) []row {
	t.Helper()
	var rows []row
	out := ok(t, dir, append([]string{"list", "--json", "-n", "0"}, args...)...)
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("list --json: %v\n%s", err, out)
	}
	return rows
}

func ids(rows []row) map[string]bool {
	m := map[string]bool{}
	for _, r := range rows {
		m[r.ID] = true
	}
	return m
}
