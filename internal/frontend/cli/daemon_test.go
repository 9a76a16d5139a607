package cli

import (
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/daemon"
	"github.com/git-synaptic/git-synaptic/internal/frontend/agenthook"
	"github.com/git-synaptic/git-synaptic/internal/frontend/forward"
	"github.com/git-synaptic/git-synaptic/memory"
)

// The daemon's plan: which command lines it runs, under what arguments,
// and how much standard input the client sends; every command line it
// takes is one the small git-synaptic program offers it.
func TestPrepare(t *testing.T) {
	const declined, none, hook, save = -1, 0, agenthook.MaxInput, memory.MaxContentBytes + 1
	for _, tc := range []struct {
		args  string
		tty   bool // standard input is a terminal
		stdin int64
	}{
		{"search flaky sync", false, none},
		{"save we chose postgres --type decision", false, none},
		{"save --type issue", false, save},
		{"save --type issue", true, declined}, // typed content: in place
		{"save -F -", false, save},
		{"save -F note.md", false, none},
		{"save --to origin x", false, declined}, // pushes: in place
		{"save --nosuch x", false, declined},    // its usage error: in place
		{"hook prompt", false, hook},
		{"hook prompt", true, none},
		{"hook session-start", false, hook},
		{"hook post-commit", false, none},
		{"hook post-merge", false, none},
		{"hook tool", false, hook},
		{"hook nosuch", false, declined},
		{"list", false, declined},
		{"init", false, declined},
	} {
		args := strings.Fields(tc.args)
		plan, why := prepare(daemon.Request{Args: args, StdinTTY: tc.tty})
		if (why != "") != (tc.stdin == declined) {
			t.Errorf("%q (tty %v): declined %q", tc.args, tc.tty, why)
			continue
		}
		if why != "" {
			continue
		}
		if !forward.Candidate(args) && !forward.GitHandoff(args) {
			t.Errorf("%q: the daemon takes what git-synaptic never offers it", tc.args)
		}
		if plan.Stdin != tc.stdin {
			t.Errorf("%q (tty %v): stdin %d, want %d", tc.args, tc.tty, plan.Stdin, tc.stdin)
		}
		want := tc.args
		if args[0] == "save" {
			// saved under an id of its own, the flag first
			id, ok := strings.CutPrefix(plan.Args[1], "--"+saveIDFlag+"=")
			if !ok || !memory.ValidID(id) {
				t.Errorf("%q: planned %q, no id", tc.args, plan.Args)
				continue
			}
			want = "save " + plan.Args[1] + strings.TrimPrefix(tc.args, "save")
		}
		if got := strings.Join(plan.Args, " "); got != want {
			t.Errorf("%q: planned %q", tc.args, got)
		}
	}
	a, _ := prepare(daemon.Request{Args: []string{"save", "x"}})
	b, _ := prepare(daemon.Request{Args: []string{"save", "x"}})
	if a.Args[1] == b.Args[1] {
		t.Errorf("two saves planned under one id: %s", a.Args[1])
	}
}
