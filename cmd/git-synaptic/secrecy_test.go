package main_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// remoteMemory is every byte of memory the remote holds: each file of each
// commit ever reachable from its memory and notes refs, and the commit
// messages.
func remoteMemory(t *testing.T, remote string) string {
	t.Helper()
	var b strings.Builder
	for _, ref := range []string{"refs/synaptic/memory", "refs/notes/synaptic"} {
		if testrepo.Git(t, remote, "for-each-ref", ref) == "" {
			continue
		}
		b.WriteString(testrepo.Git(t, remote, "log", "--format=%B", ref))
		for _, c := range strings.Fields(testrepo.Git(t, remote, "rev-list", ref)) {
			for _, line := range strings.Split(testrepo.Git(t, remote, "ls-tree", "-r", c), "\n") {
				if f := strings.Fields(line); len(f) == 4 {
					b.WriteString(testrepo.Git(t, remote, "cat-file", "-p", f[2]))
					b.WriteByte('\n')
				}
			}
		}
	}
	return b.String()
}

// Private memory and secrets must not reach the remote by any derived path:
// rules from corrections, session handoffs, captured exchanges,
// near-duplicate links, or any field other than the content.
func TestNothingPrivateOrSecretReachesTheRemote(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")

	// A private correction accepted as a rule stays private.
	const privCorrection = "from now on always deploy with the blue-falcon runbook, never the old one"
	corr := save(t, a, privCorrection, "--private", "--tag", "correction")
	ruleOut := ok(t, a, "rules", "accept", corr)
	// A private insight of the session is not quoted by its handoff.
	const privInsight = "turns out the root cause was the crimson-otter feature flag"
	priv := save(t, a, privInsight, "--private", "--session", "s1", "--type", "insight")
	save(t, a, "we decided to keep the cache in the git dir", "--session", "s1", "--type", "decision")
	// The session's exchange is captured, privately.
	runWith(t, a, `{"session_id":"s1","hook_event_name":"UserPromptSubmit","prompt":"tidy the amber-heron module"}`, nil, "hook", "prompt")
	runWith(t, a, `{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"amber.go"}}`, nil, "hook", "tool")
	runWith(t, a, `{"session_id":"s1","hook_event_name":"Stop"}`, nil, "hook", "stop")
	if caps := listJSON(t, a, "--tag", "auto-capture"); len(caps) != 1 || !caps[0].Private || !strings.Contains(caps[0].Content, "amber-heron") {
		t.Fatalf("captured exchange: %+v", caps)
	}
	// A shared save that is a near-duplicate of the private one does not
	// link to it, and says so; an explicit link is refused.
	if r := run(t, a, "", "save", "the root cause was the crimson-otter feature flag, it turns out"); r.code != 0 ||
		!strings.Contains(r.err, "near-duplicate of "+priv[:8]) || !strings.Contains(r.err, "not linked to it (it is private memory") {
		t.Fatalf("a shared near-duplicate of private memory: exit %d, stderr %q; want it reported as not linked", r.code, r.err)
	}
	if r := run(t, a, "", "save", "see the private note", "--related", priv); r.code != 4 || !strings.Contains(r.err, "private") {
		t.Fatalf("linking a shared entry to a private one: exit %d, %s", r.code, r.err)
	}

	// Secrets in fields other than content are refused, with exit 4.
	shared := save(t, a, "an ordinary shared decision")
	for _, args := range [][]string{
		{"save", "tagged", "--tag", "xoxb-123456789012-abcdefghijklmnop"},
		{"save", "tagged", "--tag", "glpat-x7k2m9q4w8e1r5t3y6u0"},
		{"save", "with session", "--session", "AWS_KEY_AKIAQYLPMN5HHHFPZAM2"},
		{"save", "with agent", "--agent", "ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"},
		{"save", "AWS_KEY_AKIAQYLPMN5HHHFPZAM2 in the content"},
		{"relevant", shared, "--reason", "token=xoxb-123456789012-abcdefghijklmnop"},
		{"relevant", shared, "--objective", "use AKIAQYLPMN5HHHFPZAM2 for uploads"},
		{"edit", shared, "--add-tag", "xoxb-123456789012-abcdefghijklmnop"},
		{"note", "HEAD", "deploy key AKIAQYLPMN5HHHFPZAM2"},
	} {
		r := run(t, a, "", args...)
		if r.code != 4 || !strings.Contains(r.err, "looks like a secret") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal (exit 4)", args, r.code, r.err)
		}
	}
	// --allow-secret stores it, and says what it found.
	r := run(t, a, "", "save", "the docs' example key AKIAQYLPMN5HHHFPZAM2", "--allow-secret")
	if r.code != 0 || !strings.Contains(r.err, "AWS access key id") {
		t.Fatalf("--allow-secret: exit %d, stderr %q; want a warning naming the finding", r.code, r.err)
	}

	ok(t, a, "sync")
	pushed := remoteMemory(t, remote)
	for _, leak := range []string{"blue-falcon", privInsight, corr, priv, "xoxb-", "glpat-", "ghp_", "amber", "1 progress"} {
		if strings.Contains(pushed, leak) {
			t.Errorf("the remote holds %q", leak)
		}
	}
	if !strings.Contains(pushed, "keep the cache in the git dir") || !strings.Contains(pushed, "AKIAQYLPMN5HHHFPZAM2") {
		t.Fatalf("the remote lacks the shared entries:\n%s", pushed)
	}
	// The rule exists, privately.
	rule := strings.Fields(ruleOut)
	if len(rule) == 0 {
		t.Fatalf("rules accept printed nothing")
	}
	rows := listJSON(t, a, "--type", "rule")
	if len(rows) != 1 || !rows[0].Private || !strings.Contains(rows[0].Content, "blue-falcon") {
		t.Fatalf("rule from a private correction: %+v", rows)
	}
}

// Tags and labels are lower-cased when stored, and content can carry a
// credential encoded or glued to a name; each way in is refused (exit 4)
// and nothing of the key reaches the remote, in any case.
func TestSecretsAreScannedAsGivenAndDecoded(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	const key = "AKIAQYLPMN5HHHFPZAM2"
	shared := save(t, a, "an ordinary shared decision")
	corr := save(t, a, "from now on always use the blue runbook", "--tag", "correction")
	jsonl := writeJSONL(t, `{"content":"imported","tags":["`+key+`"]}`)
	for _, args := range [][]string{
		{"save", "tagged", "--tag", key},
		{"edit", shared, "--add-tag", key},
		{"rules", "accept", corr, "--label", key},
		{"import", jsonl},
		{"save", "a signed URL https://s3.example.com/b?key%3D" + key + "&x=1"},
		{"save", "an encoded token access_token%3Dghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"},
		{"save", "glued to a digit: 0" + key},
		{"save", "export DB_PASSWORD=Xk9mQ2vL7pR4wZ"},
		{"save", "DATABASE_PASSWORD: Xk9mQ2vL7pR4wZ"},
		{"save", "MYSQL_PWD=Xk9mQ2vL7pR4wZ mysql -u root"},
		{"save", "STRIPE_API_KEY=sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
		{"save", "curl -H 'Authorization: Bearer Zq8Lm3Np7Rt2Vx9Ky4Bw6Cd1Fg5Hj0Ks' https://api.example.com"},
	} {
		r := run(t, a, "", args...)
		if r.code != 4 || !strings.Contains(r.err, "looks like a secret") {
			t.Errorf("%v: exit %d, stderr %q; want a refusal (exit 4)", args, r.code, r.err)
		}
	}
	// MCP tags and rule labels too.
	c := startMCP(t, a)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"context_save", map[string]any{"content": "tagged over MCP", "tags": []string{key}}},
		{"context_save_rule", map[string]any{"content": "a rule", "label": key}},
	} {
		if r := c.tool(call.tool, call.args); !r.IsError || !strings.Contains(r.Content[0].Text, "looks like a secret") {
			t.Errorf("%s: %+v; want a refusal", call.tool, r)
		}
	}
	// A private entry may carry the tag: it is never pushed.
	save(t, a, "private and tagged", "--private", "--tag", key)

	ok(t, a, "sync")
	pushed := strings.ToLower(remoteMemory(t, remote))
	for _, leak := range []string{strings.ToLower(key), "ghp_", "xk9mq2vl7pr4wz", "4ec39hqlyjwdarjtt1zdp7dc", "zq8lm3np7rt2vx9ky4bw6cd1fg5hj0ks"} {
		if strings.Contains(pushed, leak) {
			t.Errorf("the remote holds %q", leak)
		}
	}
	if !strings.Contains(pushed, "an ordinary shared decision") {
		t.Fatalf("the remote lacks the shared entry:\n%s", pushed)
	}
}

// A line exported with "private": true stays private on import, beside a
// shared line of the same file; only the shared one reaches the remote.
func TestImportKeepsPrivateLinesPrivate(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	ok(t, a, "import", writeJSONL(t,
		`{"content":"the private plan is codenamed velvet-lynx","private":true,"tags":["plan"]}`,
		`{"content":"we ship the shared plan on fridays","private":false}`))
	rows := listJSON(t, a)
	if len(rows) != 2 {
		t.Fatalf("rows: %+v", rows)
	}
	for _, r := range rows {
		if r.Private != strings.Contains(r.Content, "velvet-lynx") {
			t.Errorf("imported %q with private=%v", r.Content, r.Private)
		}
	}
	ok(t, a, "sync")
	pushed := remoteMemory(t, remote)
	if strings.Contains(pushed, "velvet-lynx") || !strings.Contains(pushed, "fridays") {
		t.Fatalf("the remote holds:\n%s", pushed)
	}
}

// Private memory lives in a repository of its own inside the git dir, so
// even git push --mirror (every ref) cannot publish it; a worktree shares
// it; and a clone that kept it in refs/synaptic-local/memory (before this
// layout) has it moved out of the shared repository on the next command.
func TestPrivateMemoryIsOutOfReachOfAnyPush(t *testing.T) {
	clones, _ := testrepo.NewReposAndRemote(t, 1)
	a := clones[0]
	ok(t, a, "init")
	save(t, a, "the shared plan ships on fridays")

	oldPrivateLayout(t, a, "the old private note mentions the walrus-key")

	rows := listJSON(t, a)
	found := false
	for _, r := range rows {
		found = found || (r.Private && strings.Contains(r.Content, "walrus-key"))
	}
	if !found {
		t.Fatalf("the old private entry is not listed as private: %+v", rows)
	}
	if refs := testrepo.Git(t, a, "for-each-ref", "refs/synaptic-local/"); refs != "" {
		t.Fatalf("the shared repository still holds private refs: %s", refs)
	}
	save(t, a, "the new private note mentions the narwhal-token", "--private")

	wt := filepath.Join(t.TempDir(), "wt")
	testrepo.Git(t, a, "worktree", "add", "-q", "--detach", wt)
	if l := ok(t, wt, "list"); !strings.Contains(l, "narwhal-token") || !strings.Contains(l, "walrus-key") {
		t.Errorf("the worktree does not see private memory:\n%s", l)
	}

	mirror := filepath.Join(t.TempDir(), "mirror.git")
	testrepo.Git(t, a, "init", "-q", "--bare", mirror)
	testrepo.Git(t, a, "push", "-q", "--mirror", mirror)
	all := testrepo.Git(t, mirror, "cat-file", "--batch-all-objects", "--batch")
	if !strings.Contains(all, "ships on fridays") {
		t.Fatal("the mirror lacks shared memory: the check reads nothing")
	}
	for _, leak := range []string{"walrus-key", "narwhal-token"} {
		if strings.Contains(all, leak) {
			t.Errorf("git push --mirror published %q", leak)
		}
	}
}

// oldPrivateLayout writes one private entry the way earlier versions
// kept private memory: in refs/synaptic-local/memory of the shared
// repository.
func oldPrivateLayout(t *testing.T, dir, content string) {
	t.Helper()
	blob := strings.TrimSpace(testrepo.GitStdin(t, dir, `{"v":1,"id":"0123456789abcdef0123456789abcdef","type":"insight","content":"`+content+`","created":"2026-01-02T03:04:05Z"}`+"\n", "hash-object", "-w", "--stdin"))
	sub := strings.TrimSpace(testrepo.GitStdin(t, dir, "100644 blob "+blob+"\t0123456789abcdef0123456789abcdef.json\n", "mktree"))
	top := strings.TrimSpace(testrepo.GitStdin(t, dir, "040000 tree "+sub+"\t01\n", "mktree"))
	root := strings.TrimSpace(testrepo.GitStdin(t, dir, "040000 tree "+top+"\tentries\n", "mktree"))
	old := strings.TrimSpace(testrepo.Git(t, dir, "commit-tree", root, "-m", "private memory, old layout"))
	testrepo.Git(t, dir, "update-ref", "refs/synaptic-local/memory", old)
}

// Several commands meeting the old layout at once each move private
// memory out, or find it moved: every save succeeds and nothing is lost.
func TestConcurrentCommandsMovePrivateMemoryOnce(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	oldPrivateLayout(t, dir, "the old private note mentions the walrus-key")
	var wg sync.WaitGroup
	for k := 0; k < 4; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := run(t, dir, "", "save", "--private", fmt.Sprintf("concurrent private note %d", k)); r.code != 0 {
				t.Errorf("save %d: %+v", k, r)
			}
		}()
	}
	wg.Wait()
	n := 0
	for _, r := range listJSON(t, dir) {
		if r.Private {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d private entries, want 5", n)
	}
	if refs := testrepo.Git(t, dir, "for-each-ref", "refs/synaptic-local/"); refs != "" {
		t.Errorf("the shared repository still holds private refs: %s", refs)
	}
}
