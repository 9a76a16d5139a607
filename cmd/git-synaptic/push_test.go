package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// gitRun runs git in dir and returns its exit code and combined output,
// without failing the test: the exit code is what is compared.
func gitRun(t *testing.T, dir string, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), string(out)
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, string(out)
}

func commitFile(t *testing.T, dir, name string) {
	t.Helper()
	os.WriteFile(filepath.Join(dir, name), []byte(name+"\n"), 0o644)
	testrepo.Git(t, dir, "add", name)
	testrepo.Git(t, dir, "commit", "-q", "-m", "add "+name)
}

// After init, git push does for branches exactly what it did before: the
// same exit code and the same branches on the remote, in every case git
// itself treats specially. Memory goes along without making it fail.
func TestGitPushBehavesAsBeforeInit(t *testing.T) {
	type outcome struct {
		code     int
		branches string
	}
	scenario := func(t *testing.T, withInit bool) map[string]outcome {
		clones, remote := testrepo.NewReposAndRemote(t, 2)
		a, b := clones[0], clones[1]
		if withInit {
			ok(t, a, "init")
			ok(t, b, "init")
			if got, _ := gitRun(t, a, "config", "--get-all", "remote.origin.push"); got != 1 {
				t.Fatalf("init configured push refspecs (git config exit %d)", got)
			}
		}
		res := map[string]outcome{}
		record := func(name string, code int) {
			res[name] = outcome{code, testrepo.Git(t, remote, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags")}
		}
		// 1. A new branch without upstream: git refuses (push.default simple).
		testrepo.Git(t, a, "checkout", "-q", "-b", "topic")
		commitFile(t, a, "topic.txt")
		if withInit {
			save(t, a, "memory saved on a topic branch")
		}
		code, _ := gitRun(t, a, "push")
		record("no upstream", code)
		// 2. A detached HEAD: git refuses.
		testrepo.Git(t, a, "checkout", "-q", "--detach")
		code, _ = gitRun(t, a, "push")
		record("detached", code)
		// 3. A teammate pushed (memory and code) first; our branch is behind
		// on main too: git rejects the branch.
		testrepo.Git(t, a, "checkout", "-q", "main")
		commitFile(t, b, "b.txt")
		if withInit {
			save(t, b, "b's memory, pushed first")
		}
		testrepo.Git(t, b, "push", "-q")
		commitFile(t, a, "a.txt")
		code, _ = gitRun(t, a, "push")
		record("behind", code)
		// 4. After a pull, the push goes through.
		testrepo.Git(t, a, "pull", "-q", "--no-rebase", "--no-edit")
		code, _ = gitRun(t, a, "push")
		record("after pull", code)
		// 5. push.default current publishes the new branch.
		testrepo.Git(t, a, "checkout", "-q", "topic")
		testrepo.Git(t, a, "config", "push.default", "current")
		code, _ = gitRun(t, a, "push")
		record("push.default current", code)
		// 6. An explicit refspec to a URL rather than a remote name.
		testrepo.Git(t, a, "tag", "v1")
		code, _ = gitRun(t, a, "push", remote, "v1")
		record("url", code)
		if withInit {
			mem := testrepo.Git(t, remote, "log", "--format=%s", "refs/synaptic/memory")
			if !strings.Contains(mem, "Merge memory") && strings.Count(mem, "save ") < 2 {
				t.Errorf("memory on the remote after the pushes:\n%s", mem)
			}
			tree := testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
			if strings.Count(tree, "entries/") != 2 {
				t.Errorf("the remote should hold both clones' entries:\n%s", tree)
			}
		}
		return res
	}
	plain := scenario(t, false)
	synaptic := scenario(t, true)
	for name, want := range plain {
		got := synaptic[name]
		if got.code != want.code {
			t.Errorf("%s: git push exits %d after init, %d without", name, got.code, want.code)
		}
		// Commit ids differ between the two runs; compare branch names.
		names := func(s string) string {
			var out []string
			for _, l := range strings.Split(s, "\n") {
				out = append(out, strings.Fields(l + " ")[0])
			}
			return strings.Join(out, ",")
		}
		if names(got.branches) != names(want.branches) {
			t.Errorf("%s: remote branches after init %q, without %q", name, names(got.branches), names(want.branches))
		}
	}
	if plain["no upstream"].code == 0 || plain["detached"].code == 0 || plain["behind"].code == 0 || plain["after pull"].code != 0 {
		t.Fatalf("the control run did not exercise git's refusals: %+v", plain)
	}
}

// When memory cannot be pushed (here the remote refuses every update of
// memory refs), the user's branch push still succeeds, and git-synaptic
// says what to do.
func TestGitPushNeverFailsBecauseOfMemory(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	hook := "#!/bin/sh\nwhile read old new ref; do case $ref in refs/synaptic/*|refs/notes/*) echo memory refused >&2; exit 1;; esac; done\nexit 0\n"
	os.WriteFile(filepath.Join(remote, "hooks", "pre-receive"), []byte(hook), 0o755)
	save(t, a, "memory the remote refuses")
	commitFile(t, a, "x.txt")
	code, out := gitRun(t, a, "push")
	if code != 0 {
		t.Fatalf("git push failed because of memory: exit %d\n%s", code, out)
	}
	if !strings.Contains(out, "memory was not pushed") || !strings.Contains(out, "git synaptic sync") {
		t.Fatalf("no word that memory stayed behind:\n%s", out)
	}
	if testrepo.Git(t, remote, "rev-parse", "main") != testrepo.Git(t, a, "rev-parse", "main") {
		t.Fatal("the branch did not reach the remote")
	}
	// synaptic.autoPush off (any way git spells false): nothing tried,
	// nothing said.
	for i, off := range []string{"false", "no", "off", "0"} {
		testrepo.Git(t, a, "config", "synaptic.autoPush", off)
		commitFile(t, a, fmt.Sprintf("y%d.txt", i))
		if code, out := gitRun(t, a, "push"); code != 0 || strings.Contains(out, "memory") {
			t.Fatalf("with autoPush %s: exit %d\n%s", off, code, out)
		}
	}
}

// Repositories set up by an earlier init had push refspecs; init takes them
// out (and the HEAD refspec that came with them), leaving the user's own.
func TestInitRemovesOldPushRefspecs(t *testing.T) {
	clones, _ := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	for _, v := range []string{"HEAD", "refs/synaptic/*:refs/synaptic/*", "refs/notes/synaptic*:refs/notes/synaptic*", "refs/heads/main:refs/heads/main"} {
		testrepo.Git(t, a, "config", "--add", "remote.origin.push", v)
	}
	out := ok(t, a, "init")
	if !strings.Contains(out, "remote.origin.push -= refs/synaptic/*") {
		t.Fatalf("init output:\n%s", out)
	}
	if got := testrepo.Git(t, a, "config", "--get-all", "remote.origin.push"); got != "refs/heads/main:refs/heads/main" {
		t.Fatalf("push refspecs left: %q", got)
	}
}

// sync pushes only memory refs that point at a commit: a blob under
// refs/synaptic/ and a ref to a missing object are reported and left out,
// and the rest of memory still goes. A remote name must be a configured
// remote, never an option.
func TestSyncSkipsRefsThatAreNotMemory(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	id := save(t, a, "good memory")
	blob := testrepo.GitStdin(t, a, "junk", "hash-object", "-w", "--stdin")
	testrepo.Git(t, a, "update-ref", "refs/synaptic/junk", blob)
	os.WriteFile(filepath.Join(a, ".git", "refs", "synaptic", "gone"), []byte("1234567890123456789012345678901234567890\n"), 0o644)
	r := run(t, a, "", "sync")
	if r.code != 0 {
		t.Fatalf("sync with bad refs beside memory: exit %d\n%s", r.code, r.err)
	}
	// A ref whose commit is gone blocks git fetch: sync removes it first
	// (repair), saying so.
	if !strings.Contains(r.err, "not pushing refs/synaptic/junk") || !strings.Contains(r.err, "repaired refs/synaptic/gone") {
		t.Fatalf("bad refs not reported:\n%s", r.err)
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic/gone"); refs != "" {
		t.Fatalf("the dangling ref is still here: %s", refs)
	}
	refs := testrepo.Git(t, remote, "for-each-ref", "--format=%(refname)", "refs/synaptic")
	if refs != "refs/synaptic/memory" {
		t.Fatalf("remote memory refs: %q", refs)
	}
	if !strings.Contains(testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory"), id) {
		t.Fatal("the good memory did not reach the remote")
	}
	for _, bad := range []string{"--upload-pack=touch /tmp/x", "-q", "nosuchremote"} {
		if r := run(t, a, "", "sync", "--", bad); r.code == 0 || r.code == 1 {
			t.Errorf("sync %q: exit %d (%s), want a refusal", bad, r.code, r.err)
		}
	}
}

// A fresh clone shows its remote's memory as soon as init has run: init
// fetches the memory of each remote it sets up. Before init, status does
// not call memory it never fetched empty; offline, init says so and goes
// on.
func TestInitFetchesTheMemoryOfAFreshClone(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	ok(t, a, "save", "we pin the Go toolchain in go.mod", "--type", "decision")
	ok(t, a, "sync")

	fresh := filepath.Join(t.TempDir(), "fresh")
	testrepo.Git(t, a, "clone", "-q", remote, fresh)
	testrepo.Git(t, fresh, "remote", "add", "gone", filepath.Join(t.TempDir(), "no-such-remote.git"))
	if st := ok(t, fresh, "status"); strings.Contains(st, ": empty") || !strings.Contains(st, "remote origin refs/synaptic/memory: not fetched (git synaptic init sets up fetching)") {
		t.Fatalf("status before init:\n%s", st)
	}
	out := ok(t, fresh, "init")
	for _, want := range []string{"memory fetched: 1 new entries", "memory of gone not fetched (", "git synaptic sync fetches it later"} {
		if !strings.Contains(out, want) {
			t.Errorf("init output lacks %q:\n%s", want, out)
		}
	}
	if rows := listJSON(t, fresh); len(rows) != 1 || !strings.Contains(rows[0].Content, "pin the Go toolchain") {
		t.Fatalf("the fresh clone's memory after init: %+v", rows)
	}
	if st := ok(t, fresh, "status"); !strings.Contains(st, "remote origin refs/synaptic/memory: in sync") {
		t.Fatalf("status after init:\n%s", st)
	}
	if again := ok(t, fresh, "init"); !strings.Contains(again, "already set up") || strings.Contains(again, "not fetched") {
		t.Fatalf("init again fetched again:\n%s", again)
	}
}

// A remote moved to a new address (git remote set-url, a migration to
// another host) gets this memory: neither git push nor sync takes the
// tracking refs of the old address for what the new one holds.
func TestMemoryReachesARemoteMovedToANewAddress(t *testing.T) {
	clones, _ := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	id := save(t, a, "we moved the repository to the new forge")
	ok(t, a, "sync")
	hasMemory := func(remote string) bool {
		return strings.Contains(testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory"), id)
	}
	moved := filepath.Join(t.TempDir(), "moved.git")
	testrepo.Git(t, "", "init", "-q", "--bare", "-b", "main", moved)
	testrepo.Git(t, a, "remote", "set-url", "origin", moved)
	if st := ok(t, a, "status"); !strings.Contains(st, "remote origin refs/synaptic/memory: not fetched from its new address yet") {
		t.Fatalf("status after set-url:\n%s", st)
	}
	commitFile(t, a, "after-move.txt")
	testrepo.Git(t, a, "push", "-q", "origin", "main")
	if !hasMemory(moved) {
		t.Fatal("git push to the new address left the memory behind")
	}
	again := filepath.Join(t.TempDir(), "again.git")
	testrepo.Git(t, "", "init", "-q", "--bare", "-b", "main", again)
	testrepo.Git(t, a, "remote", "set-url", "origin", again)
	if out := ok(t, a, "sync"); !hasMemory(again) {
		t.Fatalf("sync to the new address left the memory behind:\n%s", out)
	}
	if st := ok(t, a, "status"); !strings.Contains(st, "remote origin refs/synaptic/memory: in sync") {
		t.Fatalf("status after the sync:\n%s", st)
	}
}

// A memory push that takes longer than synaptic.prePushWait (the first
// push of a large memory, a slow remote) does not hold git push: it goes
// on in the background and gets there. While one runs, the next git push
// says so and starts no second one.
func TestAPushOfMemoryThatTakesLongGoesOnInTheBackground(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	id := save(t, a, "the first push of a large memory")
	// every connection to the remote waits 3s before git serves it
	testrepo.Git(t, a, "config", "protocol.ext.allow", "always")
	testrepo.Git(t, a, "remote", "set-url", "origin", testrepo.ShellRemote("sleep 3", remote))
	testrepo.Git(t, a, "config", "synaptic.prePushWait", "1s")
	commitFile(t, a, "slow.txt")
	code, out := gitRun(t, a, "push", "origin", "main")
	if code != 0 || !strings.Contains(out, "memory is still being pushed to origin; it goes on in the background") {
		t.Fatalf("git push: exit %d\n%s", code, out)
	}
	// git push did not wait for it (the sync needs two more connections
	// of 3s each): the sync holds none of git's pipes
	if refs := testrepo.Git(t, remote, "for-each-ref", "refs/synaptic/memory"); refs != "" {
		t.Fatalf("git push returned only after the memory push: %s", refs)
	}
	log := filepath.Join(a, ".git", "synaptic", "push.log")
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(testrepo.Git(t, remote, "for-each-ref", "refs/synaptic/memory"), "refs/synaptic/memory") {
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(log)
			t.Fatalf("the memory never reached the remote; the background sync said:\n%s", b)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory"), id) {
		t.Fatal("the background push left the entry behind")
	}

	// a push still running (its lock held): the next git push goes on
	// without starting another
	f, err := os.OpenFile(log, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// (the background sync ends soon after its push)
	for syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		if time.Now().After(deadline) {
			t.Fatal("the background sync never ended")
		}
		time.Sleep(100 * time.Millisecond)
	}
	save(t, a, "memory saved while a push runs")
	commitFile(t, a, "while.txt")
	code, out = gitRun(t, a, "push", "origin", "main")
	if code != 0 || !strings.Contains(out, "a memory push started by an earlier git push is still running") {
		t.Fatalf("git push while a memory push runs: exit %d\n%s", code, out)
	}
}
