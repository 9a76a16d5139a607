package main_test

import (
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// memoryHistoryHolds reports whether the memory ref's history in dir (a
// clone or a bare remote), messages and file contents, holds text.
func memoryHistoryHolds(t *testing.T, dir, text string) bool {
	t.Helper()
	return strings.Contains(testrepo.Git(t, dir, "log", "-p", "refs/synaptic/memory"), text)
}

func TestPurgeRemovesAnEntryFromEveryHistory(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 2)
	a, b := clones[0], clones[1]
	ok(t, a, "init")
	ok(t, b, "init")
	leak := "the staging password is hunter2-but-longer"
	bad := save(t, a, leak, "--allow-secret")
	keep := save(t, a, "we chose postgres for billing")
	ok(t, a, "edit", bad, "--add-tag", "oops")
	ok(t, a, "sync")
	ok(t, b, "sync")
	if !strings.Contains(ok(t, b, "list"), "staging password") {
		t.Fatal("b did not get the entry")
	}

	if r := run(t, a, "", "delete", "--purge", "abcd1234"); r.code != 3 {
		t.Fatalf("purging an unknown id: exit %d", r.code)
	}
	out := ok(t, a, "delete", "--purge", bad[:8])
	if !strings.Contains(out, "purged "+bad[:8]+" (2 files") {
		t.Fatalf("purge output: %s", out)
	}
	if l := ok(t, a, "list", "--include-archived"); strings.Contains(l, "staging password") || !strings.Contains(l, keep[:8]) {
		t.Fatalf("a after purge:\n%s", l)
	}
	if memoryHistoryHolds(t, a, "hunter2") {
		t.Fatal("a's memory history still holds the purged text")
	}
	if r := run(t, a, "", "show", bad); r.code != 3 {
		t.Fatalf("show purged: exit %d", r.code)
	}

	// sync replaces the remote's history (with a lease)
	ok(t, a, "sync")
	if memoryHistoryHolds(t, remote, "hunter2") {
		t.Fatal("the remote's memory history still holds the purged text")
	}
	// b still has it in its own history; its next sync merges the tombstone,
	// cuts the entry out of its history too, and pushes nothing back
	other := save(t, b, "b's own note about redis")
	ok(t, b, "sync")
	if l := ok(t, b, "list", "--include-archived"); strings.Contains(l, "staging password") || !strings.Contains(l, keep[:8]) || !strings.Contains(l, other[:8]) {
		t.Fatalf("b after sync:\n%s", l)
	}
	for _, dir := range []string{b, remote} {
		if memoryHistoryHolds(t, dir, "hunter2") {
			t.Fatalf("%s's memory history holds the purged text after b's sync", dir)
		}
	}
	ok(t, a, "sync")
	if l := ok(t, a, "list"); !strings.Contains(l, other[:8]) || strings.Contains(l, "staging password") {
		t.Fatalf("a after the second sync:\n%s", l)
	}
	testrepo.Git(t, a, "fsck", "--no-progress")
	testrepo.Git(t, remote, "fsck", "--no-progress")
}

// reachableHolds reports whether any object reachable from any ref or
// reflog entry in dir holds text (what git gc would keep).
func reachableHolds(t *testing.T, dir, text string) bool {
	t.Helper()
	objs := testrepo.Git(t, dir, "rev-list", "--objects", "--all", "--reflog")
	for _, line := range strings.Split(objs, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if strings.Contains(testrepo.Git(t, dir, "cat-file", "-p", f[0]), text) {
			return true
		}
	}
	return false
}

// A clone that edited the entry before it heard of the purge loses the
// edit too (the tombstone covers every operation on the entry, whenever it
// arrives), and no reflog keeps the purged text reachable.
func TestPurgeCoversEditsFromClonesThatHadNotSeenIt(t *testing.T) {
	for _, bFirst := range []bool{false, true} {
		clones, remote := testrepo.NewReposAndRemote(t, 2)
		a, b := clones[0], clones[1]
		ok(t, a, "init")
		ok(t, b, "init")
		bad := save(t, a, "the staging password is in the vault", "--tag", "ops")
		ok(t, a, "sync")
		ok(t, b, "sync")
		// b edits the entry, repeating the secret, before the purge reaches it.
		ok(t, b, "edit", bad, "-m", "the staging password is plum-velvet-mango-42", "--allow-secret")
		if bFirst {
			ok(t, b, "sync") // the edit reaches the remote before a purges
		}
		ok(t, a, "delete", "--purge", bad)
		ok(t, a, "sync")
		ok(t, b, "sync")
		ok(t, a, "sync")
		for name, dir := range map[string]string{"a": a, "b": b, "remote": remote} {
			if memoryHistoryHolds(t, dir, "plum-velvet") {
				t.Errorf("b first %v: %s's memory history holds the purged edit", bFirst, name)
			}
			if strings.Contains(ok(t, dir, "list", "--include-archived"), "staging password") {
				t.Errorf("b first %v: %s lists the purged entry", bFirst, name)
			}
		}
		for name, dir := range map[string]string{"a": a, "b": b} {
			if reachableHolds(t, dir, "plum-velvet") {
				t.Errorf("b first %v: in %s the purged edit is still reachable (a ref or a reflog)", bFirst, name)
			}
		}
		testrepo.Git(t, remote, "fsck", "--no-progress")
	}
}

// A session handoff quotes the session's learnings ("- [id] text"), and a
// rule accepted from a correction keeps its wording: purging the entry
// purges them too, so its text is neither on the remote nor found by
// search after sync.
func TestPurgeReachesHandoffsAndRulesThatQuoteIt(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	const leak = "the staging database listens on port 6543 behind the amber-gate proxy"
	bad := save(t, a, leak, "--session", "s1", "--type", "insight")
	keep := save(t, a, "we decided to keep the cache in the git dir", "--session", "s1", "--type", "decision")
	runWith(t, a, `{"session_id":"s1","hook_event_name":"Stop"}`, nil, "hook", "stop")
	handoffs := listJSON(t, a, "--type", "handoff")
	if len(handoffs) != 1 || !strings.Contains(handoffs[0].Content, "amber-gate") {
		t.Fatalf("handoff: %+v", handoffs)
	}
	const corrText = "from now on never route through the violet-gate proxy"
	corr := save(t, a, corrText, "--tag", "correction")
	ok(t, a, "rules", "accept", corr)
	ok(t, a, "sync")

	out := ok(t, a, "delete", "--purge", bad[:8], corr[:8])
	if !strings.Contains(out, handoffs[0].ID[:8]) {
		t.Errorf("purge did not name the handoff it took along: %s", out)
	}
	ok(t, a, "sync")
	for _, text := range []string{"amber-gate", "violet-gate"} {
		if memoryHistoryHolds(t, remote, text) || memoryHistoryHolds(t, a, text) {
			t.Errorf("%q is still in memory history", text)
		}
		if s := ok(t, a, "search", text, "--mode", "bm25"); strings.Contains(s, text) {
			t.Errorf("search %s still finds: %s", text, s)
		}
	}
	if l := ok(t, a, "list"); !strings.Contains(l, keep[:8]) {
		t.Errorf("the unrelated decision went too:\n%s", l)
	}
}
