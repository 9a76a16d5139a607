package cli

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) {
	cleanup := testrepo.Isolate()
	code := m.Run()
	cleanup()
	os.Exit(code)
}

// runIn runs the CLI in process, in dir, and returns the exit code and
// what it printed.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// Flags and arguments are checked in process, before any work: each bad
// use exits 2 with a message naming the problem; good ones get past the
// checks.
func TestFlagParsing(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"log", "--since", "the day before"}, ExitUsage, "cannot read time"},
		{[]string{"log", "--until", "soon"}, ExitUsage, "cannot read time"},
		{[]string{"log", "--type", "decisions"}, ExitUsage, "unknown type"},
		{[]string{"log", "--tier", "forever"}, ExitUsage, "unknown tier"},
		{[]string{"log", "-n", "-1"}, ExitUsage, "--max-count must be 0 or more"},
		{[]string{"search", "--type", "nope", "x"}, ExitUsage, "unknown type"},
		{[]string{"search"}, ExitUsage, "requires at least 1 arg"},
		{[]string{"log", "--no-such-flag"}, ExitUsage, "unknown flag"},
		{[]string{"index", "--since", "sometime"}, ExitUsage, "cannot read time"},
		{[]string{"cochanges"}, ExitUsage, "accepts 1 arg"},
		{[]string{"rules", "accept"}, ExitUsage, "accepts 1 arg"},
		{[]string{"no-such-command"}, ExitFailure, "unknown command"}, // as git: exit 1
		// good uses get past the checks
		{[]string{"log", "--since", "3d", "--type", "decision", "--tier", "longterm", "-n", "0"}, ExitOK, ""},
		{[]string{"list", "--type", "git_commit"}, ExitOK, ""},
	} {
		code, _, stderr := runIn(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, stderr, tc.err)
		}
		if tc.code != ExitOK && !strings.Contains(stderr, "git-synaptic") {
			t.Errorf("%v: the message does not say who speaks: %q", tc.args, stderr)
		}
	}
}
