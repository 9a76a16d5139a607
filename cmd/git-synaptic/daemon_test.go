package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// withDaemon turns the warm process on for one test, in a runtime
// directory of its own, and stops it when the test ends.
func withDaemon(t *testing.T) []string {
	t.Helper()
	env := []string{"GIT_SYNAPTIC_DAEMON=on", "XDG_RUNTIME_DIR=" + t.TempDir()}
	t.Cleanup(func() {
		runEnv(t, os.TempDir(), env, "daemon", "stop")
		waitDaemon(t, env, false)
		// the socket goes once the daemon's last work (a request or a
		// piece of background embedding in this test's repositories) ended
		var st struct{ Socket string }
		json.Unmarshal([]byte(runEnv(t, os.TempDir(), env, "daemon", "status", "--json").out), &st)
		for deadline := time.Now().Add(20 * time.Second); st.Socket != ""; time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(st.Socket); os.IsNotExist(err) {
				break
			}
			if time.Now().After(deadline) {
				t.Error("the stopped daemon did not finish")
				break
			}
		}
	})
	return env
}

type daemonStatus struct {
	Running bool `json:"running"`
	Status  struct {
		PID      int `json:"pid"`
		Requests int `json:"requests"`
	} `json:"status"`
}

func statusOf(t *testing.T, env []string) daemonStatus {
	t.Helper()
	var st daemonStatus
	r := runEnv(t, os.TempDir(), env, "daemon", "status", "--json")
	if r.code != 0 || json.Unmarshal([]byte(r.out), &st) != nil {
		t.Fatalf("daemon status: exit %d\n%s%s", r.code, r.out, r.err)
	}
	return st
}

// waitDaemon waits until a daemon runs (or none does) and returns its status.
func waitDaemon(t *testing.T, env []string, running bool) daemonStatus {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		st := statusOf(t, env)
		if st.Running == running {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("daemon running: %v, want %v", st.Running, running)
		}
	}
}

// The same searches and hooks give the same answers (ids, order, scores,
// injected text) with the warm process and without, on identical copies
// of a repository; the daemon served them.
func TestDaemonGivesTheSameAnswers(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	a := testrepo.NewRepo(t)
	for _, c := range [][]string{
		{"the build fails because sqlite is missing on the CI runners", "--type", "issue"},
		{"we chose postgres for the billing service: invoices need transactions", "--type", "decision"},
		{"billing retries back off 1, 4 and 16 seconds", "--type", "decision"},
		{"the sync test is slow because it waits for the fetch timeout", "--type", "insight"},
	} {
		save(t, a, c[0], c[1:]...)
	}
	b := filepath.Join(t.TempDir(), "repo") // the same project name
	if out, err := exec.Command("cp", "-a", a, b).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	runEnv(t, b, env, "search", "warm up") // starts the daemon, runs in place
	waitDaemon(t, env, true)
	type call struct {
		args  []string
		stdin string
	}
	calls := []call{
		{[]string{"search", "--json", "-n", "5", "compilation error: library not found"}, ""},
		{[]string{"search", "--json", "why do billing retries wait"}, ""},
		{[]string{"search", "--json", "--mode", "bm25", "billing"}, ""},
		{[]string{"hook", "session-start", "--format", "markdown"}, `{"session_id":"s1"}`},
		{[]string{"hook", "prompt", "--format", "markdown"}, `{"session_id":"s1","prompt":"why do billing retries wait between attempts?"}`},
		{[]string{"hook", "prompt"}, `{"session_id":"s1","prompt":"what database did we choose for invoices?"}`},
		{[]string{"search", "--bogus-flag", "x"}, ""},
		// an exchange captured: its prompt, a tool call, its end
		{[]string{"hook", "tool"}, `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"billing/retry.go"}}`},
		{[]string{"hook", "tool"}, `{"session_id":"s1","tool_name":"Bash","tool_input":{"command":"go test ./billing"}}`},
		{[]string{"hook", "tool"}, `{"session_id":"bad\nid","tool_name":"Bash"}`},
		{[]string{"hook", "stop"}, `{"session_id":"s1","last_assistant_message":"Billing retries back off 1, 4 and 16 seconds, set in billing/retry.go."}`},
	}
	for _, c := range calls {
		inPlace := runWith(t, a, c.stdin, nil, c.args...)
		warm := runWith(t, b, c.stdin, env, c.args...)
		if c.args[0] == "search" && c.args[1] == "--json" {
			// the clock moves between the two: recency differs in the
			// ninth digit, so scores are compared within a tolerance
			if len(scored(t, inPlace.out, false)) == 0 {
				t.Errorf("%v found nothing:\n%s", c.args, inPlace.out)
			}
			if !sameRanking(t, inPlace.out, warm.out, false) {
				t.Errorf("%v ranks differently:\nin place:\n%s\nwarm:\n%s", c.args, inPlace.out, warm.out)
			}
			inPlace.out, warm.out = "", ""
		}
		if inPlace != warm {
			t.Errorf("%v differs:\nin place: exit %d\n%s%s\nwarm: exit %d\n%s%s", c.args, inPlace.code, inPlace.out, inPlace.err, warm.code, warm.out, warm.err)
		}
	}
	if st := statusOf(t, env); st.Status.Requests < len(calls) {
		t.Errorf("the daemon served %d requests, want at least %d", st.Status.Requests, len(calls))
	}
	// the same exchange captured, its tool calls with it
	captured := func(dir string) string {
		caps := listJSON(t, dir, "--tag", "auto-capture")
		if len(caps) != 1 {
			t.Fatalf("captured exchanges: %+v", caps)
		}
		return caps[0].Content
	}
	if x, y := captured(a), captured(b); x != y || !strings.Contains(y, "billing/retry.go") || !strings.Contains(y, "go test ./billing") {
		t.Errorf("captured in place:\n%s\nthrough the daemon:\n%s", x, y)
	}
	// The daemon keeps the repository open between requests. Meanwhile
	// other commands save and rebuild the cache file it holds: the next
	// answer is still that of a fresh command.
	for _, dir := range []string{a, b} {
		save(t, dir, "nightly job retries the failed invoices of billing", "--type", "insight")
		if r := runWith(t, dir, "", nil, "reindex"); r.code != 0 {
			t.Fatalf("reindex: %d %s", r.code, r.err)
		}
		save(t, dir, "billing invoices are retried by the nightly job, not by the worker", "--type", "decision")
	}
	args := []string{"search", "--json", "who retries failed billing invoices"}
	inPlace, warm := runWith(t, a, "", nil, args...), runWith(t, b, "", env, args...)
	if !sameRanking(t, inPlace.out, warm.out, true) || !strings.Contains(warm.out, "not by the worker") || !strings.Contains(warm.out, "nightly job retries") {
		t.Errorf("after a rebuilt cache:\nin place:\n%s\nwarm:\n%s%s", inPlace.out, warm.out, warm.err)
	}
	if st := statusOf(t, env); st.Status.Requests < len(calls)+1 {
		t.Errorf("the daemon served %d requests, want at least %d", st.Status.Requests, len(calls)+1)
	}
}

// scoreTolerance is how far two scores of the same search may differ:
// the clock moves between two runs, and recency with it (its 30-day
// half-life moves a score by about 3e-7 of itself a second, so 1e-5 is
// half a minute between the runs). Rounding both to a fixed number of
// digits is no answer: the two sides of a rounding boundary print
// differently.
const scoreTolerance = 1e-5

type hit struct {
	key   string
	score float64
}

// scored is a search's JSON as keys (ids, or contents when byContent:
// the same saves in two copies get different ids) and scores, in order.
func scored(t *testing.T, out string, byContent bool) []hit {
	t.Helper()
	var hits []struct {
		ID      string  `json:"id"`
		Content string  `json:"content"`
		Score   float64 `json:"score"`
	}
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r := make([]hit, len(hits))
	for i, h := range hits {
		r[i] = hit{h.ID, h.Score}
		if byContent {
			r[i].key = h.Content
		}
	}
	return r
}

// sameRanking says whether two searches' JSON found the same entries in
// the same order with the same scores, within scoreTolerance.
func sameRanking(t *testing.T, a, b string, byContent bool) bool {
	t.Helper()
	x, y := scored(t, a, byContent), scored(t, b, byContent)
	if len(x) != len(y) {
		return false
	}
	for i := range x {
		if x[i].key != y[i].key || math.Abs(x[i].score-y[i].score) > scoreTolerance {
			return false
		}
	}
	return true
}

// Attacks: kill -9 of the daemon under a request, the socket file it
// leaves, two daemons racing, another binary's daemon, a socket directory
// others can open. Every command still answers.
func TestDaemonAttacks(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	dir := testrepo.NewRepo(t)
	id := save(t, dir, "the sync test is slow because it waits for the fetch timeout", "--type", "issue")
	found := func(env []string) {
		t.Helper()
		if r := runEnv(t, dir, env, "search", "sync test slow"); r.code != 0 || !strings.Contains(r.out, id[:8]) {
			t.Fatalf("search: exit %d\n%s%s", r.code, r.out, r.err)
		}
	}
	found(env)
	first := waitDaemon(t, env, true)

	// kill -9 while searches run: each still answers
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(30 * time.Millisecond)
		syscall.Kill(first.Status.PID, syscall.SIGKILL)
	}()
	for range 5 {
		found(env)
	}
	<-done
	// the socket file it left is replaced by the next daemon
	found(env)
	second := waitDaemon(t, env, true)
	if second.Status.PID == first.Status.PID {
		t.Fatalf("the killed daemon (pid %d) still answers", first.Status.PID)
	}
	found(env)

	// a second daemon racing the first exits cleanly
	race := exec.Command(bin, "daemon", "run")
	race.Env = append(os.Environ(), env...)
	if out, err := race.CombinedOutput(); err != nil {
		t.Errorf("a second daemon: %v %s", err, out)
	}
	if st := statusOf(t, env); st.Status.PID != second.Status.PID {
		t.Errorf("the racing daemon took over: %+v", st)
	}

	// another binary (another version) has a daemon of its own
	other := filepath.Join(t.TempDir(), "git-synaptic")
	if out, err := exec.Command("cp", bin, filepath.Join(filepath.Dir(bin), "git-synaptic-core"), filepath.Dir(other)).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	cmd := exec.Command(other, "daemon", "status", "--json")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	var st daemonStatus
	if err != nil || json.Unmarshal(out, &st) != nil || st.Running {
		t.Errorf("another binary sees this binary's daemon: %s %v", out, err)
	}

	// a socket directory others can open: no daemon, commands run in place
	loose := t.TempDir()
	if err := os.Mkdir(filepath.Join(loose, "git-synaptic"), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(loose, "git-synaptic"), 0o777)
	looseEnv := []string{"GIT_SYNAPTIC_DAEMON=on", "XDG_RUNTIME_DIR=" + loose}
	found(looseEnv)
	found(looseEnv)
	if r := runEnv(t, dir, looseEnv, "daemon", "status"); r.code == 0 || !strings.Contains(r.err, "not private") {
		t.Errorf("status in a loose directory: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if m, _ := filepath.Glob(filepath.Join(loose, "git-synaptic", "*.sock")); len(m) > 0 {
		t.Errorf("a daemon listens in a loose directory: %v", m)
	}

	// synaptic.daemon false: the running daemon declines, none is started
	testrepo.Git(t, dir, "config", "synaptic.daemon", "false")
	before := statusOf(t, env).Status.Requests
	found(env)
	if after := statusOf(t, env).Status.Requests; after != before {
		t.Errorf("the daemon ran a command with synaptic.daemon false (%d → %d)", before, after)
	}
}

// gitWith runs git in dir with extra environment (the hooks it runs get it).
func gitWith(t *testing.T, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// After init, a commit and a pull hand their work to the warm process:
// the commit is indexed and the memory the pull fetched is merged before
// any git-synaptic command runs. A user's own post-commit hook still runs.
func TestCommitHooksHandOffToTheDaemon(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	clones, _ := testrepo.NewReposAndRemote(t, 2)
	a, b := clones[0], clones[1]
	userHook := "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/user-commit-hook-ran\"\n"
	os.WriteFile(filepath.Join(b, ".git", "hooks", "post-commit"), []byte(userHook), 0o755)
	for _, d := range []string{a, b} {
		runEnv(t, d, env, "init")
	}
	runEnv(t, b, env, "index")
	runEnv(t, b, env, "search", "warm up")
	waitDaemon(t, env, true)

	// A hook hands its work over and git waits for nothing: a warm
	// process still busy (warming the repository after the search, under
	// load) runs it once free.
	handedOff := func(what string, act func(n int)) {
		t.Helper()
		before := statusOf(t, env).Status.Requests
		act(0)
		for deadline := time.Now().Add(30 * time.Second); statusOf(t, env).Status.Requests <= before; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the %s hook did not reach the daemon", what)
			}
		}
	}
	handedOff("post-commit", func(n int) {
		os.WriteFile(filepath.Join(b, "frob.go"), []byte(fmt.Sprintf("package frob // %d\n", n)), 0o644)
		testrepo.Git(t, b, "add", "frob.go")
		gitWith(t, b, env, "commit", "-q", "-m", "add the frobnicator")
	})
	if got, _ := os.ReadFile(filepath.Join(b, ".git", "user-commit-hook-ran")); !strings.Contains(string(got), "ran") {
		t.Error("the user's post-commit hook did not run")
	}
	var hits []row
	json.Unmarshal([]byte(runEnv(t, b, []string{"GIT_SYNAPTIC_DAEMON=off"}, "search", "frobnicator", "--type", "git_commit", "--json").out), &hits)
	head := testrepo.Git(t, b, "rev-parse", "HEAD")
	if !slices.ContainsFunc(hits, func(h row) bool { return h.ID == head }) {
		t.Fatalf("the commit is not searchable: %+v", hits)
	}

	// a teammate's memory and commit arrive with a pull: post-merge merges the memory
	id := save(t, a, "the frobnicator needs a warm cache", "--type", "insight")
	handedOff("post-merge", func(n int) {
		commitFiles(t, a, fmt.Sprintf("teammate's change %d", n), "other.go")
		testrepo.Git(t, a, "push", "-q", "origin", "main")
		gitWith(t, b, env, "pull", "-q", "--no-rebase")
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		tree, _ := exec.Command("git", "-C", b, "ls-tree", "-r", "--name-only", "refs/synaptic/memory").Output()
		if strings.Contains(string(tree), id) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pull's memory was not merged by the post-merge hook")
		}
	}
}

// Entries a search leaves without vectors are embedded by the warm
// process between requests; the search says so meanwhile.
func TestDaemonEmbedsInTheBackground(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	dir := testrepo.NewRepo(t)
	var lines strings.Builder
	for i := range 300 {
		fmt.Fprintf(&lines, `{"content": "release %d: the parser handles case %d", "type": "progress"}`+"\n", i, i)
	}
	if r := runWith(t, dir, lines.String(), nil, "import", "-"); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	r := runEnv(t, dir, env, "search", "parser release")
	if r.code != 0 || !strings.Contains(r.err, "not embedded yet") || !strings.Contains(r.err, "background") {
		t.Fatalf("the first search does not say embedding goes on: exit %d\n%s", r.code, r.err)
	}
	waitDaemon(t, env, true)
	runEnv(t, dir, env, "search", "parser release") // through the daemon: it takes over
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		var st struct{ Embedded, Entries int }
		json.Unmarshal([]byte(runEnv(t, dir, []string{"GIT_SYNAPTIC_DAEMON=off"}, "model", "status", "--json").out), &st)
		if st.Entries == 300 && st.Embedded == st.Entries {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the daemon did not embed the rest: %+v", st)
		}
	}
}

// Saves from the command line go to the warm process, which holds the
// repository open: content from the arguments, after "--", from a file
// named from the caller's directory and from standard input, with the
// caller's environment, each saved as a save in place saves it, errors
// alike. A save that pushes (--to) runs in place.
func TestSavesGoThroughTheDaemon(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	a, b := testrepo.NewRepo(t), testrepo.NewRepo(t)
	for _, dir := range []string{a, b} {
		if err := os.WriteFile(filepath.Join(dir, "note.md"), []byte("# runbook\nrestart the worker before the migration\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runEnv(t, b, env, "search", "warm up") // starts the daemon, runs in place
	waitDaemon(t, env, true)
	// the daemon loads the model for this search: not later, between the
	// saves, where a slow load under a busy machine would hold a save
	// past the daemon's busy wait (it would then run in place)
	runEnv(t, b, env, "search", "warm up")
	before := statusOf(t, env).Status.Requests
	session := []string{"GIT_SYNAPTIC_SESSION=s-warm"}
	calls := []struct {
		args  []string
		stdin string
	}{
		{[]string{"save", "we chose postgres for billing", "--type", "decision", "--tag", "db"}, ""},
		{[]string{"save", "--type", "issue"}, "flaky: TestSync times out under load\n"},
		{[]string{"save", "-F", "note.md", "--type", "reference", "--pin"}, ""},
		{[]string{"save", "-F", "-", "--tier", "longterm"}, "helm upgrades need --atomic"},
		{[]string{"save", "--", "-z sorts by NUL, not content"}, ""},
		{[]string{"save", "deploy with token ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"}, ""},
		{[]string{"save", "--type", "nosuch", "x"}, ""},
		{[]string{"save", "-F", "missing.md"}, ""},
		{[]string{"save", "--type", "reference"}, strings.Repeat("a long runbook ", 5000)}, // over 64 KiB
	}
	for _, c := range calls {
		inPlace := runWith(t, a, c.stdin, session, c.args...)
		warm := runWith(t, b, c.stdin, append(slices.Clone(env), session...), c.args...)
		if inPlace.code == 0 && len(strings.TrimSpace(inPlace.out)) == 32 && len(strings.TrimSpace(warm.out)) == 32 {
			inPlace.out, warm.out = "", "" // ids of their own
		}
		if inPlace != warm {
			t.Errorf("%v differs:\nin place: exit %d\n%s%s\nwarm: exit %d\n%s%s", c.args, inPlace.code, inPlace.out, inPlace.err, warm.code, warm.out, warm.err)
		}
	}
	served := statusOf(t, env).Status.Requests - before
	if served < len(calls) {
		t.Errorf("the daemon served %d of the %d saves", served, len(calls))
	}
	saved := func(dir string) string {
		var out []string
		for _, r := range listJSON(t, dir) {
			out = append(out, fmt.Sprintf("%s %q %v %s %v %s %s", r.Type, r.Content, r.Tags, r.Tier, r.Pinned, r.Session, r.Author))
		}
		slices.Sort(out)
		return strings.Join(out, "\n")
	}
	if x, y := saved(a), saved(b); x != y || strings.Count(y, "s-warm") != 5 {
		t.Errorf("saved in place:\n%s\nthrough the daemon:\n%s", x, y)
	}
	// --to pushes: it runs in place, the daemon not asked
	n := statusOf(t, env).Status.Requests
	inPlace, warm := runWith(t, a, "", nil, "save", "--to", "nosuch", "x"), runWith(t, b, "", env, "save", "--to", "nosuch", "x")
	if warm.code == 0 || inPlace != warm {
		t.Errorf("save --to: in place exit %d %s, warm exit %d %s", inPlace.code, inPlace.err, warm.code, warm.err)
	}
	if after := statusOf(t, env).Status.Requests; after != n {
		t.Errorf("the daemon ran save --to (%d → %d requests)", n, after)
	}
}

// A save whose warm process dies under it, after saving or before, runs
// again in place under the id it was planned with: one entry either way.
// The daemon here plans the request (a piped save's content read and
// sent to it), runs the save itself or not, and hangs up without an
// answer, as a daemon killed then would.
func TestALostSaveIsSavedOnce(t *testing.T) {
	modelHome(t)
	env := []string{"GIT_SYNAPTIC_DAEMON=on", "XDG_RUNTIME_DIR=" + t.TempDir()}
	dir := testrepo.NewRepo(t)
	var st struct{ Socket string }
	if err := json.Unmarshal([]byte(runEnv(t, dir, env, "daemon", "status", "--json").out), &st); err != nil || st.Socket == "" {
		t.Fatalf("daemon status: %v %+v", err, st)
	}
	ln, err := net.Listen("unix", st.Socket)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for i, c := range []struct{ savesFirst, piped bool }{{true, false}, {false, false}, {true, true}, {false, true}} {
		type lost struct {
			args  []string
			stdin string
			tip   string // of memory once the daemon saved
			err   error
		}
		got := make(chan lost, 1)
		id := fmt.Sprintf("%032x", 0xfeed0+i)
		go func() {
			conn, err := ln.Accept()
			if err != nil {
				got <- lost{err: err}
				return
			}
			defer conn.Close()
			var req struct {
				Args     []string `json:"args"`
				Dir      string   `json:"dir"`
				Env      []string `json:"env"`
				StdinTTY bool     `json:"stdin_tty"`
			}
			dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
			if err := dec.Decode(&req); err != nil {
				got <- lost{err: err}
				return
			}
			type plan struct {
				Args  []string `json:"args"`
				Stdin int64    `json:"stdin,omitempty"`
			}
			p := plan{Args: append([]string{"save", "--id=" + id}, req.Args[1:]...)}
			if c.piped {
				p.Stdin = 1 << 20
			}
			enc.Encode(map[string]plan{"plan": p})
			var in struct{ Stdin []byte }
			if c.piped {
				if err := dec.Decode(&in); err != nil {
					got <- lost{err: fmt.Errorf("no input: %v", err)}
					return
				}
			}
			fmt.Fprintln(conn, `{"ready":true}`)
			var proceed struct{ Go bool }
			if err := dec.Decode(&proceed); err != nil || !proceed.Go {
				got <- lost{err: fmt.Errorf("no go: %v", err)}
				return
			}
			if c.savesFirst {
				cmd := exec.Command(bin, p.Args...)
				cmd.Dir, cmd.Env = req.Dir, append(req.Env, "GIT_SYNAPTIC_DAEMON=off")
				cmd.Stdin = strings.NewReader(string(in.Stdin))
				out, err := cmd.Output()
				if err != nil {
					got <- lost{err: fmt.Errorf("%v: %s", err, out)}
					return
				}
				tip, err := exec.Command("git", "-C", req.Dir, "rev-parse", "refs/synaptic/memory").Output()
				if err != nil {
					got <- lost{err: err}
					return
				}
				got <- lost{args: p.Args, stdin: string(in.Stdin), tip: strings.TrimSpace(string(tip))}
				return
			}
			got <- lost{args: p.Args, stdin: string(in.Stdin)}
		}()
		content := fmt.Sprintf("lost save %d: the deploy needs --atomic", i)
		var r result
		if c.piped {
			r = runWith(t, dir, content, env, "save", "--type", "insight")
		} else {
			r = runWith(t, dir, "", env, "save", content, "--type", "insight")
		}
		var l lost
		select {
		case l = <-got:
		case <-time.After(time.Minute):
			t.Fatal("the save never reached the daemon")
		}
		if l.err != nil {
			t.Fatalf("the daemon: %v", l.err)
		}
		if c.piped && l.stdin != content {
			t.Errorf("the daemon was sent %q, want the piped content", l.stdin)
		}
		if r.code != 0 || strings.TrimSpace(r.out) != id {
			t.Fatalf("%+v: planned %v; exit %d, printed %q (%s)", c, l.args, r.code, r.out, r.err)
		}
		var ids []string
		for _, e := range listJSON(t, dir) {
			if e.Content == content {
				ids = append(ids, e.ID)
			}
		}
		if len(ids) != 1 || ids[0] != id {
			t.Errorf("%+v: entries of the content %v, want just %s", c, ids, id)
		}
		if l.tip != "" {
			// saved once: memory is as the daemon left it
			if now := strings.TrimSpace(testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")); now != l.tip {
				t.Errorf("memory was written again: %s, then %s", l.tip, now)
			}
		}
	}
	// the same id with other content is another entry's: refused
	r := runWith(t, dir, "", []string{"GIT_SYNAPTIC_DAEMON=off"}, "save", "--id="+listJSON(t, dir)[0].ID, "something else")
	if r.code == 0 || !strings.Contains(r.err, "taken by another entry") {
		t.Errorf("a taken id: exit %d %s", r.code, r.err)
	}
}

// A save whose content is piped in waits for it after the warm process
// planned it; an interrupt then ends it, with 130, even though the pipe
// never closes: nothing is saved.
func TestAnInterruptEndsAWaitForInput(t *testing.T) {
	modelHome(t)
	env := withDaemon(t)
	dir := testrepo.NewRepo(t)
	runEnv(t, dir, env, "search", "warm up") // starts the daemon, runs in place
	waitDaemon(t, env, true)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd := exec.Command(bin, "save", "--type", "issue")
	cmd.Dir, cmd.Env, cmd.Stdin = dir, append(os.Environ(), env...), r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r.Close()
	w.Write([]byte("half a line, and the writer never closes"))
	before := statusOf(t, env).Status.Requests
	time.Sleep(300 * time.Millisecond) // planned, reading
	cmd.Process.Signal(os.Interrupt)
	begun := time.Now()
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	select {
	case err := <-ended:
		if code := cmd.ProcessState.ExitCode(); code != 130 {
			t.Errorf("exit %d (%v), want 130", code, err)
		}
		if took := time.Since(begun); took > 5*time.Second {
			t.Errorf("it took %v to end", took)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("an interrupt did not end a save waiting for its input")
	}
	if n := len(listJSON(t, dir)); n != 0 {
		t.Errorf("%d entries saved", n)
	}
	if after := statusOf(t, env).Status.Requests; after != before {
		t.Errorf("the daemon ran the interrupted save (%d → %d requests)", before, after)
	}
}
