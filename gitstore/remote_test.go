package gitstore

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// A fetch is stopped after silence without a word from git, and not
// before: a remote that keeps talking (its progress) for longer than
// that is fetched whole. The remote is git's ext:: transport running
// upload-pack behind a shell that first talks, or keeps quiet, on stderr.
func TestFetchIsBoundedBySilenceNotDuration(t *testing.T) {
	b, remote := memoryRemote(t)
	for _, tc := range []struct {
		name, before string
		ok           bool
	}{
		{"talking", "for i in 1 2 3 4 5 6 7 8 9 10; do echo still packing >&2; sleep 0.5; done", true},
		{"silent", "sleep 10", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			testrepo.Git(t, b, "config", "remote."+tc.name+".url", testrepo.ShellRemote(tc.before, remote))
			r := open(t, b)
			start := time.Now()
			err := r.Fetch(context.Background(), tc.name, 3*time.Second, "+refs/synaptic/*:refs/remotes/"+tc.name+"/synaptic/*")
			took := time.Since(start)
			if tc.ok {
				if err != nil {
					t.Fatalf("a remote that kept talking for %v was cut: %v", took, err)
				}
				if tip, err := r.Tip("refs/remotes/" + tc.name + "/synaptic/memory"); err != nil || tip.IsZero() {
					t.Fatalf("fetched nothing: %v %v", tip, err)
				}
				return
			}
			if !errors.Is(err, ErrNetworkTimeout) {
				t.Fatalf("a silent remote: %v", err)
			}
			// 3s of silence, then at most run's WaitDelay (2s) for the
			// shell that still holds git's pipes; well before the shell
			// would have started serving
			if took > 9*time.Second {
				t.Fatalf("a silent remote was stopped after %v, want about 3s", took)
			}
		})
	}
}

// memoryRemote returns a clone whose remote holds memory, and that
// remote, with git's ext:: transport allowed in the clone.
func memoryRemote(t *testing.T) (clone, remote string) {
	clones, remote := testrepo.NewReposAndRemote(t, 2)
	testrepo.Git(t, clones[0], "update-ref", "refs/synaptic/memory", "HEAD")
	testrepo.Git(t, clones[0], "push", "-q", "origin", "refs/synaptic/memory")
	testrepo.Git(t, clones[1], "config", "protocol.ext.allow", "always")
	return clones[1], remote
}

// Under ShowingTransfers, a fetch writes git's progress where it is told
// (a terminal): a transfer of minutes is not silent.
func TestFetchShowsItsProgressWhenAsked(t *testing.T) {
	b, remote := memoryRemote(t)
	// git shows its own progress only after a second or two; the remote
	// here says something at once
	testrepo.Git(t, b, "config", "remote.talking.url", testrepo.ShellRemote("echo packing memory >&2", remote))
	var shown bytes.Buffer
	r := open(t, b)
	if err := r.Fetch(ShowingTransfers(context.Background(), &shown), "talking", 0, "+refs/synaptic/*:refs/remotes/talking/synaptic/*"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(shown.String(), "packing memory") {
		t.Fatalf("no progress shown: %q", shown.String())
	}
}
