package gitstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// The synaptic.* keys, read at once, answer as git config does: booleans
// as --type=bool reads them, every value of a multi-valued key, a key
// without a value, another section's keys; and what another process
// writes into the repository's config or the user's, or sets in the
// environment, is seen.
func TestSynapticConfigAnswersAsGitDoes(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	r := open(t, dir)
	gitConfig := func(args ...string) { testrepo.Git(t, dir, append([]string{"config"}, args...)...) }
	for _, kv := range [][2]string{{"synaptic.capture", "off"}, {"synaptic.autoPush", "1"}, {"synaptic.crossProject", "YES"}} {
		gitConfig(kv[0], kv[1])
	}
	gitConfig("--add", "synaptic.projects", "a")
	gitConfig("--add", "synaptic.projects", "b")
	f, _ := os.OpenFile(filepath.Join(dir, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("[synaptic]\n\tbare\n")
	f.Close()
	gitConfig("remote.origin.url", "https://example.invalid/x")
	for key, want := range map[string][2]bool{"synaptic.capture": {false, true}, "synaptic.autopush": {true, true}, "synaptic.crossProject": {true, true},
		"synaptic.bare": {true, true}, "synaptic.unset": {false, false}} {
		v, set, err := r.ConfigBool(ctx, key)
		if err != nil || v != want[0] || set != want[1] {
			t.Errorf("%s: %v set=%v %v, want %v", key, v, set, err, want)
		}
	}
	if v, err := r.ConfigGetAll(ctx, "synaptic.projects"); err != nil || !slices.Equal(v, []string{"a", "b"}) {
		t.Errorf("projects: %q %v", v, err)
	}
	if v, err := r.ConfigGetAll(ctx, "remote.origin.url"); err != nil || !slices.Equal(v, []string{"https://example.invalid/x"}) {
		t.Errorf("another section: %q %v", v, err)
	}
	gitConfig("synaptic.capture", "notabool")
	if _, _, err := r.ConfigBool(ctx, "synaptic.capture"); err == nil {
		t.Error("a value git cannot read as a boolean was read")
	}
	gitConfig("synaptic.capture", "true") // another process, the repository's file
	if v, _, err := r.ConfigBool(ctx, "synaptic.capture"); err != nil || !v {
		t.Errorf("a change to the repository's config was not seen: %v %v", v, err)
	}
	testrepo.Git(t, dir, "config", "--global", "synaptic.contextBudget", "900") // the user's file
	if v, err := r.ConfigGetAll(ctx, "synaptic.contextbudget"); err != nil || !slices.Equal(v, []string{"900"}) {
		t.Errorf("a change to the user's config was not seen: %q %v", v, err)
	}
	testrepo.Git(t, dir, "config", "--global", "synaptic.contextBudget", "800") // same size
	if v, err := r.ConfigGetAll(ctx, "synaptic.contextbudget"); err != nil || !slices.Equal(v, []string{"800"}) {
		t.Errorf("a same-size change to the user's config was not seen: %q %v", v, err)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "synaptic.promptBudget")
	t.Setenv("GIT_CONFIG_VALUE_0", "300")
	if v, err := r.ConfigGetAll(ctx, "synaptic.promptbudget"); err != nil || !slices.Equal(v, []string{"300"}) {
		t.Errorf("configuration from the environment was not seen: %q %v", v, err)
	}
	os.Unsetenv("GIT_CONFIG_COUNT")
	testrepo.Git(t, dir, "config", "--global", "synaptic.contextBudget", "900")
	if _, err := r.ConfigSet(ctx, "synaptic.contextBudget", "700"); err != nil {
		t.Fatal(err)
	}
	if v, _ := r.ConfigGetAll(ctx, "synaptic.contextBudget"); !slices.Equal(v, []string{"900", "700"}) {
		t.Errorf("after this Repo wrote: %q", v)
	}
}

// Remotes lists what git remote does, from the same snapshot: names with
// dots and capitals, sorted as git sorts them, and a remote another process
// adds; RemoteURL sees a URL another process changed.
func TestRemotesAnswerAsGitDoes(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	r := open(t, dir)
	if rs, err := r.Remotes(ctx); err != nil || len(rs) != 0 {
		t.Fatalf("no remotes: %q %v", rs, err)
	}
	for _, name := range []string{"origin", "Up.Stream", "b"} {
		testrepo.Git(t, dir, "remote", "add", name, "https://example.invalid/"+name)
		testrepo.Git(t, dir, "config", "--add", "remote."+name+".url", "https://example.invalid/second")
		got, err := r.Remotes(ctx)
		want := strings.Fields(testrepo.Git(t, dir, "remote"))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("after adding %s: %q %v, git says %q", name, got, err, want)
		}
		if u := r.RemoteURL(name); u != "https://example.invalid/"+name {
			t.Errorf("URL of %s: %q", name, u)
		}
	}
	testrepo.Git(t, dir, "config", "--replace-all", "remote.origin.url", "https://example.invalid/moved")
	if u := r.RemoteURL("origin"); u != "https://example.invalid/moved" {
		t.Errorf("URL after another process moved the remote: %q", u)
	}
}

// Configuration that includes another file is read again for each
// request (RecheckConfig): a change to the included file leaves the
// stamped files as they were.
func TestIncludedConfigIsReadAgainEachRequest(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	extra := filepath.Join(t.TempDir(), "extra.gitconfig")
	testrepo.Git(t, dir, "config", "--file", extra, "synaptic.capture", "false")
	testrepo.Git(t, dir, "config", "include.path", extra)
	r := open(t, dir)
	capture := func() bool {
		v, _, err := r.ConfigBool(ctx, "synaptic.capture")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if capture() {
		t.Fatal("the included value was not read")
	}
	testrepo.Git(t, dir, "config", "--file", extra, "synaptic.capture", "true")
	r.RecheckConfig()
	if !capture() {
		t.Error("a change to an included file was not seen after RecheckConfig")
	}
}

// The network watchdog stops a command that says nothing for its time
// and does nothing, and lets one that keeps talking, or works in silence
// (git checking a large fetch), run longer than that.
func TestWatchdogCutsSilenceNotProgress(t *testing.T) {
	run := func(script string) (error, error) {
		var pid atomic.Int64
		ctx, heard, stop := watchdog(context.Background(), 300*time.Millisecond, pid.Load)
		defer stop()
		cmd := exec.CommandContext(ctx, "bash", "-c", script)
		cmd.Stderr = heard
		cmd.WaitDelay = 100 * time.Millisecond // sh's sleep holds the pipe (run sets one too)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid.Store(int64(cmd.Process.Pid))
		return cmd.Wait(), ctx.Err()
	}
	// a second and more of work in a child, saying nothing
	if err, ctxErr := run(`bash -c 'end=$((SECONDS+2)); while [ $SECONDS -lt $end ]; do :; done'`); err != nil || ctxErr != nil {
		t.Fatalf("a command working in silence was stopped: %v %v", err, ctxErr)
	}
	if err, ctxErr := run(`for i in 1 2 3 4 5 6; do echo progress >&2; sleep 0.1; done`); err != nil || ctxErr != nil {
		t.Fatalf("a command that kept talking for 600 ms was stopped: %v %v", err, ctxErr)
	}
	start := time.Now()
	if err, ctxErr := run(`echo once >&2; sleep 5`); err == nil || ctxErr == nil || time.Since(start) > 3*time.Second {
		t.Fatalf("a silent command ran on: %v %v after %v", err, ctxErr, time.Since(start))
	}
}

// Progress lines leave git's error output; the rest stays.
func TestWithoutProgress(t *testing.T) {
	in := "Enumerating objects: 5, done.\nCounting objects:  50% (1/2)\rCounting objects: 100% (2/2), done.\nremote: Resolving deltas: 100% (1/1)\nfatal: could not read from remote\n"
	if got := withoutProgress(in); got != "fatal: could not read from remote" {
		t.Fatalf("%q", got)
	}
}
