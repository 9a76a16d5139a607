package main_test

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// newOrgMemory makes a bare org memory repository holding content, saved
// from a clone of it (returned too, for later saves).
func newOrgMemory(t *testing.T, content ...string) (bare, clone string) {
	t.Helper()
	clones, bare := testrepo.NewReposAndRemote(t, 1)
	clone = clones[0]
	ok(t, clone, "init")
	for _, c := range content {
		save(t, clone, c, "--type", "rule")
	}
	ok(t, clone, "sync")
	return bare, clone
}

func sources(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, r := range listJSON(t, dir) {
		m[r.Content] = r.Source
	}
	return m
}

// A project subscribes to an org memory repository: the org's memory is
// searched and shown at session start as the subscription's, never
// written or pushed from here; sync follows it, and a subscription that
// cannot be read neither subscribes nor blocks the project's own sync;
// save --to adds to the org memory only through a push the org accepts;
// unsubscribe drops it all.
func TestSubscriptionToOrgMemory(t *testing.T) {
	const rule = "pin container base images by digest, never by a tag alone"
	org, orgClone := newOrgMemory(t, rule)
	clones, app := testrepo.NewReposAndRemote(t, 2)
	a, b := clones[0], clones[1]
	ok(t, a, "init")
	ok(t, b, "init")

	// Refused subscriptions leave nothing behind.
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"subscribe", "bad", filepath.Join(t.TempDir(), "missing.git")}, 1},
		{[]string{"subscribe", "../x", org}, 2},
		{[]string{"subscribe", "mine", app}, 2},
		{[]string{"subscribe", "org"}, 2},
	} {
		if r := run(t, a, "", c.args...); r.code != c.code || r.err == "" {
			t.Errorf("%v: exit %d, want %d with a message\n%s", c.args, r.code, c.code, r.err)
		}
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic-sub/"); refs != "" {
		t.Errorf("a refused subscription left refs: %s", refs)
	}

	if out := ok(t, a, "subscribe", "org", org); !strings.Contains(out, "1 entries") {
		t.Errorf("subscribe says %q", out)
	}
	if r := run(t, a, "", "subscribe", "org", org); r.code != 2 || !strings.Contains(r.err, "already subscribed") {
		t.Errorf("subscribing twice: exit %d", r.code)
	}
	var subs []struct {
		Name, URL string
		Entries   int
	}
	if err := json.Unmarshal([]byte(ok(t, a, "subscriptions", "--json")), &subs); err != nil || len(subs) != 1 || subs[0].Name != "org" || subs[0].Entries != 1 {
		t.Fatalf("subscriptions --json: %v %+v", err, subs)
	}

	// Searched and injected with the subscription as provenance.
	if out := ok(t, a, "search", "base images digest"); !strings.Contains(out, "[org] "+rule) {
		t.Errorf("search does not show the org rule as the subscription's:\n%s", out)
	}
	if src := sources(t, a)[rule]; src != "refs/synaptic-sub/org/memory" {
		t.Errorf("org rule source %q", src)
	}
	ctx := run(t, a, `{"session_id":"s1","hook_event_name":"SessionStart"}`, "hook", "session-start")
	if !strings.Contains(ctx.out, "subscription org] "+rule) {
		t.Errorf("session start lacks the org rule with its provenance:\n%s", ctx.out)
	}

	// Read-only here: no operation on it, nothing of it pushed.
	orgTip := testrepo.Git(t, org, "rev-parse", "refs/synaptic/memory")
	id := ""
	for _, r := range listJSON(t, a) {
		if r.Content == rule {
			id = r.ID
		}
	}
	if r := run(t, a, "", "pin", id); r.code != 2 || !strings.Contains(r.err, "read-only") {
		t.Errorf("pin of a subscription's entry: exit %d %s", r.code, r.err)
	}
	save(t, a, "the app retries payments idempotently")
	ok(t, a, "sync")
	testrepo.Git(t, a, "push", "-q", "origin", "HEAD:refs/heads/main")
	if refs := testrepo.Git(t, app, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "synaptic-sub") || strings.Contains(refs, "outbox") {
		t.Errorf("the project's remote got subscription refs:\n%s", refs)
	}
	if strings.Contains(remoteMemory(t, app), "base images") {
		t.Error("the org rule reached the project's remote")
	}
	ok(t, b, "sync")
	if _, has := sources(t, b)[rule]; has {
		t.Error("a teammate who does not subscribe got the org rule")
	}

	// Sync follows the org memory.
	const later = "every service exports prometheus metrics on :9090"
	save(t, orgClone, later, "--type", "rule")
	ok(t, orgClone, "sync")
	if out := ok(t, a, "sync"); !strings.Contains(out, "subscription org: updated") {
		t.Errorf("sync does not report the subscription:\n%s", out)
	}
	if src := sources(t, a)[later]; src != "refs/synaptic-sub/org/memory" {
		t.Errorf("after sync the org's new rule has source %q", src)
	}

	// save --to pushes to the org memory; a secret never goes.
	const added = "payments: never log request bodies, they hold card data"
	toID := strings.TrimSpace(ok(t, a, "save", "--to", "org", "--type", "rule", added))
	if !strings.Contains(testrepo.Git(t, org, "log", "-p", "refs/synaptic/memory"), added) {
		t.Error("save --to did not reach the org memory")
	}
	if src := sources(t, a)[added]; src != "refs/synaptic-sub/org/memory" {
		t.Errorf("the entry saved --to has source %q here", src)
	}
	ok(t, orgClone, "sync")
	if _, has := sources(t, orgClone)[added]; !has {
		t.Error("the org clone does not see the entry saved --to")
	}
	if len(toID) != 32 {
		t.Errorf("save --to printed %q, want the new id", toID)
	}
	before := testrepo.Git(t, org, "rev-parse", "refs/synaptic/memory")
	if r := run(t, a, "", "save", "--to", "org", "deploy token ghp_abcdefghijklmnopqrstuvwxyz0123456789AB"); r.code != 4 {
		t.Errorf("save --to with a secret: exit %d", r.code)
	}
	if r := run(t, a, "", "save", "--to", "nope", "x"); r.code != 3 {
		t.Errorf("save --to an unknown subscription: exit %d", r.code)
	}

	// Without push access (the org's server refuses), nothing moves.
	hook := filepath.Join(org, "hooks", "pre-receive")
	if err := os.WriteFile(hook, []byte("#!/bin/sh\necho 'permission denied' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	mirror := testrepo.Git(t, a, "rev-parse", "refs/synaptic-sub/org/memory")
	if r := run(t, a, "", "save", "--to", "org", "a rule nobody may add"); r.code != 1 || !strings.Contains(r.err, "push access") {
		t.Errorf("save --to without push access: exit %d %s", r.code, r.err)
	}
	if got := testrepo.Git(t, a, "rev-parse", "refs/synaptic-sub/org/memory"); got != mirror {
		t.Error("a refused save --to moved the local copy")
	}
	if got := testrepo.Git(t, org, "rev-parse", "refs/synaptic/memory"); got != before {
		t.Error("the org memory moved")
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic-outbox/"); refs != "" {
		t.Errorf("save --to left %s", refs)
	}
	if _, has := sources(t, a)["a rule nobody may add"]; has {
		t.Error("a refused save --to shows the entry")
	}
	os.Remove(hook)
	if got := testrepo.Git(t, org, "rev-parse", "refs/synaptic/memory"); got == orgTip {
		t.Error("the org memory never moved (save --to did nothing)")
	}

	// A subscription that became unreadable does not block the own sync.
	gone, _ := newOrgMemory(t, "the gone org's only rule")
	ok(t, a, "subscribe", "gone", gone)
	if err := os.RemoveAll(gone); err != nil {
		t.Fatal(err)
	}
	const own = "the app's own memory still syncs"
	save(t, a, own)
	if r := run(t, a, "", "sync"); r.code != 1 || !strings.Contains(r.err, "gone") || !strings.Contains(r.out, "subscription org: up to date") {
		t.Errorf("sync with an unreadable subscription: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if !strings.Contains(remoteMemory(t, app), own) {
		t.Error("an unreadable subscription blocked the project's own sync")
	}

	// Unsubscribe drops the memory here, and only here.
	ok(t, a, "unsubscribe", "org")
	ok(t, a, "unsubscribe", "gone")
	if r := run(t, a, "", "unsubscribe", "org"); r.code != 3 {
		t.Errorf("unsubscribe twice: exit %d", r.code)
	}
	for content, src := range sources(t, a) {
		if strings.HasPrefix(src, "refs/synaptic-sub/") {
			t.Errorf("after unsubscribe %q is still listed", content)
		}
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic-sub/"); refs != "" {
		t.Errorf("unsubscribe left %s", refs)
	}
	if cfg := testrepo.Git(t, a, "config", "--list"); strings.Contains(cfg, "synaptic-subscription") {
		t.Errorf("unsubscribe left config:\n%s", cfg)
	}
	if _, has := sources(t, orgClone)[added]; !has {
		t.Error("unsubscribe touched the org memory")
	}
}

// Saves --to one subscription at once, from one clone and from another:
// each either fails or its entry is in the org memory (a save used to push
// another save's commit and report success).
func TestConcurrentSavesToASubscription(t *testing.T) {
	org, _ := newOrgMemory(t, "the org's first rule")
	a, b := testrepo.NewRepo(t), testrepo.NewRepo(t)
	for _, dir := range []string{a, b} {
		ok(t, dir, "init")
		ok(t, dir, "subscribe", "org", org)
	}
	const n = 6
	// Plain exec in the goroutines: t must not fail from them.
	type outcome struct {
		out string
		err error
	}
	results := make(chan outcome, 2*n)
	for i := range n {
		for _, dir := range []string{a, b} {
			go func() {
				cmd := exec.Command(bin, "save", "--to", "org", fmt.Sprintf("concurrent rule %d from %s", i, filepath.Base(dir)))
				cmd.Dir = dir
				var errb strings.Builder
				cmd.Stderr = &errb
				out, err := cmd.Output()
				if err != nil {
					err = fmt.Errorf("%w: %s", err, errb.String())
				}
				results <- outcome{string(out), err}
			}()
		}
	}
	var saved []string
	for range 2 * n {
		r := <-results
		if r.err != nil {
			t.Errorf("save --to: %v", r.err)
			continue
		}
		saved = append(saved, strings.TrimSpace(r.out))
	}
	tree := testrepo.Git(t, org, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
	for _, id := range saved {
		if !strings.Contains(tree, id) {
			t.Errorf("save --to printed %s, which the org memory lacks", id)
		}
	}
	for _, dir := range []string{a, b} {
		if refs := testrepo.Git(t, dir, "for-each-ref", "refs/synaptic-outbox/"); refs != "" {
			t.Errorf("saves left %s", refs)
		}
	}
}

// The project's own memory under another spelling (file://, a trailing
// slash, a symbolic link) or in a mirror (another URL, shared history)
// is refused, and leaves no refs or config behind.
func TestSubscribingToOwnMemoryIsRefused(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	save(t, a, "the project's own decision")
	ok(t, a, "sync")
	mirror := filepath.Join(t.TempDir(), "mirror.git")
	testrepo.Git(t, a, "clone", "-q", "--mirror", remote, mirror)
	link := filepath.Join(t.TempDir(), "link.git")
	if err := os.Symlink(remote, link); err != nil {
		t.Fatal(err)
	}
	for _, url := range []string{"file://" + remote, remote + "/", link, mirror} {
		r := run(t, a, "", "subscribe", "own", url)
		if r.code != 2 || !(strings.Contains(r.err, "already shares") || strings.Contains(r.err, "own memory")) {
			t.Errorf("subscribe %s: %+v", url, r)
		}
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic-sub/"); refs != "" {
		t.Errorf("refs left behind: %s", refs)
	}
	if out := ok(t, a, "subscriptions"); strings.Contains(out, "own") {
		t.Errorf("subscriptions: %s", out)
	}
	if out := ok(t, a, "status"); !strings.Contains(out, "consistent") {
		t.Errorf("status: %s", out)
	}
}

// A subscription whose server accepts the connection and then says
// nothing fails after synaptic.networkTimeout, named, while the project's
// own memory still syncs.
func TestSilentServerDoesNotHangSync(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	save(t, a, "the project's own decision")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var conns []net.Conn
	var mu sync.Mutex
	wg.Add(1)
	go func() { // accept, read nothing, answer nothing
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	defer func() {
		l.Close()
		wg.Wait()
		for _, c := range conns {
			c.Close()
		}
	}()
	testrepo.Git(t, a, "config", "synaptic-subscription.silent.url", "git://"+l.Addr().String()+"/org.git")
	testrepo.Git(t, a, "config", "synaptic.networkTimeout", "2s")
	start := time.Now()
	r := run(t, a, "", "sync")
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("sync took %v", d)
	}
	if r.code != 1 || !strings.Contains(r.err, "silent") || !strings.Contains(r.err, "nothing within 2s") {
		t.Fatalf("sync with a silent subscription: %+v", r)
	}
	if !strings.Contains(remoteMemory(t, remote), "the project's own decision") {
		t.Fatal("the project's own memory did not reach its remote")
	}
}
