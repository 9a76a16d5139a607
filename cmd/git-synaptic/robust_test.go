package main_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestSyncTwoClonesUnionWithoutConflictsOrDuplicates(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 2)
	a, b := clones[0], clones[1]
	var want []string
	for i := 0; i < 3; i++ {
		want = append(want, save(t, a, fmt.Sprintf("a's entry %d", i)))
	}
	for i := 0; i < 2; i++ {
		want = append(want, save(t, b, fmt.Sprintf("b's entry %d", i), "--type", "decision"))
	}
	ok(t, a, "note", "HEAD", "a's note")
	ok(t, b, "note", "HEAD", "b's note")
	ok(t, a, "sync")
	ok(t, b, "sync")
	ok(t, a, "sync")
	for _, dir := range []string{a, b} {
		rows := listJSON(t, dir, "--type", "insight", "--type", "decision")
		if len(rows) != 5 {
			t.Fatalf("%s: want 5 entries, got %d", dir, len(rows))
		}
		got := ids(rows)
		for _, id := range want {
			if !got[id] {
				t.Fatalf("%s: missing %s", dir, id)
			}
		}
		// Notes on the same commit from both clones are concatenated.
		if out := testrepo.Git(t, dir, "notes", "--ref=synaptic", "show", "HEAD"); !strings.Contains(out, "a's note") || !strings.Contains(out, "b's note") {
			t.Fatalf("%s: notes not merged: %q", dir, out)
		}
	}
	if ta, tb := testrepo.Git(t, a, "rev-parse", "refs/synaptic/memory"), testrepo.Git(t, b, "rev-parse", "refs/synaptic/memory"); ta != tb {
		t.Fatalf("clones ended on different tips %s %s", ta, tb)
	}
	if n := testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory"); strings.Count(n, "\n")+1 != 5 {
		t.Fatalf("remote tree:\n%s", n)
	}

	// Conflicting changes to one entry in both clones resolve the same way.
	x := want[0]
	ok(t, a, "edit", x, "-m", "edited in a", "--add-tag", "from-a")
	ok(t, b, "edit", x, "-m", "edited in b", "--add-tag", "from-b")
	ok(t, a, "pin", x)
	ok(t, b, "archive", x)
	ok(t, b, "sync")
	ok(t, a, "sync")
	ok(t, b, "sync")
	show := func(dir string) string {
		var d struct {
			row
			Ops []json.RawMessage `json:"ops"`
		}
		json.Unmarshal([]byte(ok(t, dir, "show", x, "--json")), &d)
		return fmt.Sprintf("%s|%v|%v|%v|%d ops", d.Content, d.Tags, d.Pinned, d.Archived, len(d.Ops))
	}
	sa, sb := show(a), show(b)
	if sa != sb {
		t.Fatalf("clones disagree on the same entry:\n a: %s\n b: %s", sa, sb)
	}
	if !strings.Contains(sa, "from-a") || !strings.Contains(sa, "from-b") || !strings.Contains(sa, "|true|true|4 ops") {
		t.Fatalf("merged state lost a change: %s", sa)
	}
	// Syncing again changes nothing.
	tip := testrepo.Git(t, a, "rev-parse", "refs/synaptic/memory")
	ok(t, a, "sync")
	if testrepo.Git(t, a, "rev-parse", "refs/synaptic/memory") != tip {
		t.Fatal("idle sync moved the ref")
	}

	// A large sync arrives as a pack; it must be readable even when the
	// syncing process had already read objects (here: a cache rebuild).
	var bulk strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&bulk, `{"content":"bulk entry %d"}`+"\n", i)
	}
	f := filepath.Join(t.TempDir(), "bulk.jsonl")
	os.WriteFile(f, []byte(bulk.String()), 0o644)
	ok(t, a, "import", f)
	ok(t, a, "sync")
	for _, suffix := range []string{"", "-wal", "-shm"} {
		os.Remove(filepath.Join(b, ".git", "synaptic", "cache.db"+suffix))
	}
	ok(t, b, "sync")
	if n := len(listJSON(t, b)); n != 305 {
		t.Fatalf("after a large sync b has %d entries, want 305", n)
	}
}

func TestConcurrentSavesLoseNothing(t *testing.T) {
	dir := testrepo.NewRepo(t)
	const procs, each = 8, 200
	var mu sync.Mutex
	printed := map[string]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, procs)
	for p := 0; p < procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				cmd := exec.Command(bin, "save", fmt.Sprintf("writer %d entry %d", p, i), "--tag", fmt.Sprintf("w%d", p))
				cmd.Dir = dir
				out, err := cmd.Output()
				if err != nil {
					stderr := ""
					if ee, ok := err.(*exec.ExitError); ok {
						stderr = string(ee.Stderr)
					}
					errs <- fmt.Errorf("writer %d save %d: %v %s", p, i, err, stderr)
					return
				}
				mu.Lock()
				printed[strings.TrimSpace(string(out))] = true
				mu.Unlock()
			}
		}(p)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(printed) != procs*each {
		t.Fatalf("%d distinct ids printed, want %d", len(printed), procs*each)
	}
	tree := testrepo.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
	if n := strings.Count(tree, "\n") + 1; n != procs*each {
		t.Fatalf("ref holds %d entries, want %d", n, procs*each)
	}
	rows := listJSON(t, dir)
	if len(rows) != procs*each {
		t.Fatalf("cache lists %d entries, want %d", len(rows), procs*each)
	}
	for _, r := range rows {
		if !printed[r.ID] {
			t.Fatalf("listed id %s was never printed", r.ID)
		}
	}
	for p := 0; p < procs; p++ {
		if n := len(listJSON(t, dir, "--tag", fmt.Sprintf("w%d", p))); n != each {
			t.Fatalf("writer %d: %d entries readable, want %d", p, n, each)
		}
	}
	testrepo.Git(t, dir, "fsck", "--no-progress")
}

func TestKill9DuringSavesLosesNothingPrinted(t *testing.T) {
	dir := testrepo.NewRepo(t)
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	printed := map[string]bool{}
	var mu sync.Mutex
	rounds := 80
	for i := 0; i < rounds; i++ {
		var wg sync.WaitGroup
		for w := 0; w < 2; w++ { // two at a time, so kills land during contention too
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				cmd := exec.Command(bin, "save", fmt.Sprintf("kill round %d writer %d", i, w))
				cmd.Dir = dir
				stdout, _ := cmd.StdoutPipe()
				if err := cmd.Start(); err != nil {
					t.Error(err)
					return
				}
				done := make(chan string, 1)
				go func() {
					line, _ := bufio.NewReader(stdout).ReadString('\n')
					done <- strings.TrimSpace(line)
				}()
				time.Sleep(time.Duration(rng.Intn(30000)) * time.Microsecond)
				cmd.Process.Signal(syscall.SIGKILL)
				id := <-done
				cmd.Wait()
				if len(id) == 32 {
					mu.Lock()
					printed[id] = true
					mu.Unlock()
				}
			}(w)
		}
		wg.Wait()
	}
	t.Logf("%d of %d killed saves had printed an id", len(printed), 2*rounds)
	// The repository is sound and later saves work (stale locks are handled).
	testrepo.Git(t, dir, "fsck", "--no-progress")
	after := save(t, dir, "after the massacre")
	rows := listJSON(t, dir)
	got := ids(rows)
	for id := range printed {
		if !got[id] {
			t.Fatalf("save printed %s but it is gone", id)
		}
	}
	if !got[after] {
		t.Fatal("save after kills missing")
	}
	tree := testrepo.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
	if n := strings.Count(tree, "\n") + 1; n != len(rows) {
		t.Fatalf("cache has %d entries, ref has %d: the cache did not recover", len(rows), n)
	}
}

// writeCommit builds a commit holding files (path → content) with git
// plumbing and points ref at it.
func writeCommit(t *testing.T, dir, ref string, files map[string]string) string {
	t.Helper()
	idx := filepath.Join(t.TempDir(), "index")
	for p, content := range files {
		blob := testrepo.GitStdin(t, dir, content, "hash-object", "-w", "--stdin")
		cmd := exec.Command("git", "update-index", "--add", "--cacheinfo", "100644,"+blob+","+p)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("update-index: %v %s", err, out)
		}
	}
	cmd := exec.Command("git", "write-tree")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_INDEX_FILE="+idx)
	tree, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	c := testrepo.Git(t, dir, "commit-tree", strings.TrimSpace(string(tree)), "-m", "garbage")
	testrepo.Git(t, dir, "update-ref", ref, c)
	return c
}

func TestGarbageInMemoryRefsIsReportedAndSkipped(t *testing.T) {
	clones, _ := testrepo.NewReposAndRemote(t, 2)
	dir, teammate := clones[0], clones[1]
	good := save(t, dir, "good entry survives garbage")
	blob := testrepo.GitStdin(t, dir, "just a blob", "hash-object", "-w", "--stdin")
	testrepo.Git(t, dir, "update-ref", "refs/synaptic/blobref", blob)
	const validID = "0123456789abcdef0123456789abcdef"
	v2 := strings.Replace(`{"v":2,"id":"ID","type":"decision","content":"from the future","author":"x","created":"2026-01-01T00:00:00Z"}`, "ID", "abcdefabcdefabcdefabcdefabcdef01", 1)
	writeCommit(t, dir, "refs/synaptic/junk", map[string]string{
		"README":                          "junk file",
		"entries/zz/notanid.json":         "{}",
		"entries/01/" + validID + ".json": "{not json",
		"entries/ab/abcdefabcdefabcdefabcdefabcdef01.json": v2,
		"entries/fe/fedcba9876543210fedcba9876543210.json": strings.Repeat("x", 2<<20),
		"ops/00/00000000000000000000000000000000.json":     `{"v":1,"id":"00000000000000000000000000000000","entry":"` + validID + `","kind":"explode","clock":1,"at":"2026-01-01T00:00:00Z"}`,
	})
	r := run(t, dir, "", "list", "--json")
	if r.code != 0 {
		t.Fatalf("list failed on garbage: %+v", r)
	}
	for _, want := range []string{"refs/synaptic/blobref", "not a commit", "refs/synaptic/junk", "README", "not a JSON object", "format v2", "upgrade git-synaptic", "over the"} {
		if !strings.Contains(r.err+r.out, want) {
			t.Errorf("warnings do not mention %q:\n%s", want, r.err)
		}
	}
	var rows []row
	json.Unmarshal([]byte(r.out), &rows)
	if len(rows) != 1 || rows[0].ID != good {
		t.Fatalf("good memory not usable: %+v", rows)
	}
	// Warned once; later commands are quiet and status lists the problems.
	if r2 := run(t, dir, "", "log"); r2.code != 0 || r2.err != "" {
		t.Fatalf("second command: %+v", r2)
	}
	var st struct {
		Problems []struct{ Source, Path, Object, Message string } `json:"problems"`
	}
	json.Unmarshal([]byte(ok(t, dir, "status", "--json")), &st)
	if len(st.Problems) < 6 {
		t.Fatalf("status problems: %+v", st.Problems)
	}
	if out := ok(t, dir, "status"); !strings.Contains(out, "unreadable memory object") {
		t.Fatalf("status text:\n%s", out)
	}
	// Saving still works, and the garbage does not spread through sync.
	save(t, dir, "another good one")
	if r := run(t, dir, "", "show", "abcdefabcdefabcdefabcdefabcdef01"); r.code != 3 {
		t.Fatalf("show of the unreadable v2 entry: %+v", r)
	}
	// Garbage pushed to the remote does not stop a teammate's sync.
	testrepo.Git(t, dir, "push", "-q", "origin", "refs/synaptic/blobref:refs/synaptic/blobref", "refs/synaptic/memory:refs/synaptic/memory")
	rs := run(t, teammate, "", "sync")
	if rs.code != 0 || !strings.Contains(rs.err, "blobref") {
		t.Fatalf("teammate sync with garbage on the remote: %+v", rs)
	}
	if n := len(listJSON(t, teammate)); n != 2 {
		t.Fatalf("teammate sees %d entries, want 2", n)
	}
}

// A FIFO where a hook or a search expects a file (the transcript, the
// project list) is refused at once instead of blocking for good, and
// SIGTERM ends a command that does block (an import reading a FIFO
// nobody writes).
func TestFIFOsDoNotHangAndSIGTERMEndsACommand(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	save(t, dir, "the cache lives in the git dir")
	tmp := t.TempDir()
	fifo := filepath.Join(tmp, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_SYNAPTIC_PROJECTS=" + fifo}
	for _, c := range []struct {
		stdin string
		args  []string
	}{
		{`{"session_id":"s1","hook_event_name":"Stop","transcript_path":"` + fifo + `"}`, []string{"hook", "stop"}},
		{`{"session_id":"s1","hook_event_name":"SessionStart"}`, []string{"hook", "session-start"}},
		{"", []string{"search", "--all-projects", "cache"}},
	} {
		start := time.Now()
		r := runWith(t, dir, c.stdin, env, c.args...)
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v took %v", c.args, d)
		}
		if c.args[0] == "hook" && r.code != 0 {
			t.Errorf("%v: %+v", c.args, r)
		}
		if c.args[0] == "search" && (r.code == 0 || !strings.Contains(r.err, "not a regular file")) {
			t.Errorf("%v with a FIFO as the project list: %+v", c.args, r)
		}
	}

	cmd := exec.Command(bin, "import", fifo)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_SYNAPTIC_DAEMON=off")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("SIGTERM took %v to end the import", d)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("SIGTERM did not end an import blocked on a FIFO")
	}
}

// git gc --prune=now beside two writers: every save that printed an id
// has its entry in the ref, git fsck is clean, and status reports the
// memory complete (it used to lose blobs and trees, leave the ref at a
// missing tree so every later save failed, and still call the cache
// consistent).
func TestPruneNowBesideWritersLosesNothing(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	stop := make(chan struct{})
	var gcs sync.WaitGroup
	gcs.Add(1)
	go func() {
		defer gcs.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			exec.Command("git", "-C", dir, "gc", "--prune=now", "--quiet").Run()
			time.Sleep(100 * time.Millisecond)
		}
	}()
	var mu sync.Mutex
	var printed []string
	var writers sync.WaitGroup
	for w := 0; w < 2; w++ {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := 0; i < 40; i++ {
				r := run(t, dir, "", "save", fmt.Sprintf("writer %d entry %d beside git gc", w, i))
				if r.code != 0 {
					t.Errorf("save: %+v", r)
					continue
				}
				mu.Lock()
				printed = append(printed, strings.TrimSpace(r.out))
				mu.Unlock()
			}
		}()
	}
	writers.Wait()
	close(stop)
	gcs.Wait()
	tree := testrepo.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
	for _, id := range printed {
		if !strings.Contains(tree, id+".json") {
			t.Errorf("save printed %s, but the ref lacks it", id)
		}
	}
	if out, err := exec.Command("git", "-C", dir, "fsck", "--no-progress").CombinedOutput(); err != nil {
		t.Errorf("git fsck: %v\n%s", err, out)
	}
	if out := ok(t, dir, "status"); strings.Contains(out, "DAMAGED") {
		t.Errorf("status: %s", out)
	}
}

// A save beside a git gc that runs longer than it waited used to report
// success for a commit the gc's prune deleted next (a gc of a million
// entries runs a minute and a half, and a write waited 30 s at most): a
// write now waits for the gc's process to end, says why while it waits,
// and a gc.pid whose process is gone holds nothing up.
func TestSaveWaitsForTheWholeGC(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	// a save that waits on and on is a failure, not a hung test
	within := func(args ...string) result {
		t.Helper()
		type ran struct {
			r   testrepo.Ran
			err error
		}
		got := make(chan ran, 1)
		go func() {
			r, err := testrepo.RunBinary(bin, dir, "", nil, args...)
			got <- ran{r, err}
		}()
		select {
		case x := <-got:
			if x.err != nil {
				t.Fatalf("run %v: %v", args, x.err)
			}
			return result{x.r.Out, x.r.Err, x.r.Code}
		case <-time.After(time.Minute):
			t.Fatalf("%v did not return within a minute", args)
			return result{}
		}
	}
	pidFile := filepath.Join(dir, ".git", "gc.pid")
	ended := testrepo.RunningGC(t, filepath.Join(dir, ".git"), 2*time.Second)
	r := within("save", "saved while a gc runs")
	done := time.Now()
	if r.code != 0 || !strings.Contains(r.err, "waiting for the git gc running here to end") {
		t.Fatalf("save beside a running gc: %+v", r)
	}
	select {
	case <-ended:
	default:
		t.Fatalf("save returned at %v, before the gc it waited for ended", done)
	}
	// the gc is gone, its gc.pid left behind (a gc killed): no wait
	start := time.Now()
	r = within("save", "saved after a killed gc")
	if r.code != 0 || strings.Contains(r.err, "waiting for the git gc") || time.Since(start) > 5*time.Second {
		t.Fatalf("save beside a dead gc's gc.pid (%v): %+v", time.Since(start), r)
	}
	os.Remove(pidFile)
	if out := ok(t, dir, "list"); !strings.Contains(out, "saved while a gc runs") || !strings.Contains(out, "saved after a killed gc") {
		t.Errorf("list after the saves:\n%s", out)
	}
}

// A ref under refs/synaptic/ whose commit is gone blocks plain git fetch,
// and a lost blob leaves memory incomplete: status says DAMAGED and exits
// 1, sync repairs before it fetches (the lost entry comes back from the
// cache), pushes only memory (not a code commit parked under
// refs/synaptic/), and git fetch works again.
func TestDamagedRefsAreReportedAndRepaired(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	save(t, a, "first entry")
	ok(t, a, "sync")
	os.WriteFile(filepath.Join(a, ".git", "refs", "synaptic", "missing"), []byte("1234567890123456789012345678901234567890\n"), 0o644)
	os.WriteFile(filepath.Join(a, "code.c"), []byte("int main;\n"), 0o644)
	testrepo.Git(t, a, "add", "code.c")
	testrepo.Git(t, a, "commit", "-q", "-m", "code")
	testrepo.Git(t, a, "update-ref", "refs/synaptic/code", "HEAD")
	lost := save(t, a, "the entry whose blob is lost")
	blob := strings.TrimSpace(testrepo.Git(t, a, "rev-parse", "refs/synaptic/memory:entries/"+lost[:2]+"/"+lost+".json"))
	if err := os.Remove(filepath.Join(a, ".git", "objects", blob[:2], blob[2:])); err != nil {
		t.Fatal(err)
	}
	if r := run(t, a, "", "status"); r.code != 1 || !strings.Contains(r.out, "DAMAGED refs/synaptic/memory") || !strings.Contains(r.out, "DAMAGED refs/synaptic/missing") || strings.Contains(r.out, "consistent") {
		t.Fatalf("status of damaged memory: %+v", r)
	}
	r := run(t, a, "", "sync")
	if r.code != 0 || !strings.Contains(r.err, "repaired refs/synaptic/memory") || !strings.Contains(r.err, "not pushing refs/synaptic/code") {
		t.Fatalf("sync: %+v", r)
	}
	if out := testrepo.Git(t, a, "ls-remote", remote); strings.Contains(out, "refs/synaptic/code") || !strings.Contains(out, "refs/synaptic/memory") {
		t.Errorf("the remote holds:\n%s", out)
	}
	testrepo.Git(t, a, "fetch", "-q")
	if out := ok(t, a, "show", lost); !strings.Contains(out, "whose blob is lost") {
		t.Errorf("show %s: %s", lost, out)
	}
	if out := ok(t, a, "repair"); !strings.Contains(out, "nothing to repair") {
		t.Errorf("repair after sync: %s", out)
	}
	if out := ok(t, a, "status"); strings.Contains(out, "DAMAGED") || !strings.Contains(out, "consistent") {
		t.Errorf("status after repair: %s", out)
	}
}
