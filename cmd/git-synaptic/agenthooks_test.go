package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestInitAgentClaudeWritesMCPConfigWithoutClobbering(t *testing.T) {
	dir := testrepo.NewRepo(t)
	existing := `{"mcpServers": {"other": {"command": "other-server"}}, "custom": [1, 2]}`
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte(existing), 0o644)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	settings := `{"permissions": {"allow": ["Bash(make test)"]}, "hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo mine"}]}], "Stop": [{"hooks": [{"type": "command", "command": "echo stop"}]}]}}`
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte(settings), 0o644)
	if out := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(out, ".mcp.json") {
		t.Fatalf("init --agent claude: %s", out)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
		Custom []int `json:"custom"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json"))
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.MCPServers["other"].Command != "other-server" || len(cfg.Custom) != 2 ||
		cfg.MCPServers["git-synaptic"].Command != "git-synaptic" || strings.Join(cfg.MCPServers["git-synaptic"].Args, " ") != "mcp" {
		t.Fatalf(".mcp.json after init:\n%s", b)
	}
	var st struct {
		Permissions struct{ Allow []string } `json:"permissions"`
		Hooks       map[string][]struct {
			Matcher string `json:"matcher"`
			Hooks   []struct{ Type, Command string }
		} `json:"hooks"`
	}
	b, _ = os.ReadFile(filepath.Join(dir, ".claude", "settings.json"))
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Permissions.Allow) != 1 || len(st.Hooks["Stop"]) != 2 || len(st.Hooks["SessionStart"]) != 2 || len(st.Hooks["PreCompact"]) != 1 || len(st.Hooks["UserPromptSubmit"]) != 1 ||
		len(st.Hooks["PostToolUse"]) != 1 || st.Hooks["PostToolUse"][0].Hooks[0].Command != "git-synaptic hook tool" ||
		st.Hooks["SessionStart"][0].Hooks[0].Command != "echo mine" || st.Hooks["SessionStart"][1].Hooks[0].Command != "git-synaptic hook session-start" ||
		st.Hooks["Stop"][0].Hooks[0].Command != "echo stop" || st.Hooks["Stop"][1].Hooks[0].Command != "git-synaptic hook stop" ||
		st.Hooks["PreCompact"][0].Hooks[0].Command != "git-synaptic hook pre-compact" {
		t.Fatalf(".claude/settings.json after init:\n%s", b)
	}
	// the auto-distill rule, once; a deleted one stays deleted
	rules := func() []map[string]any {
		var rs []map[string]any
		if err := json.Unmarshal([]byte(ok(t, dir, "rules", "--json")), &rs); err != nil {
			t.Fatal(err)
		}
		return rs
	}
	rs := rules()
	if len(rs) != 1 || rs[0]["label"] != "auto-distill" || !strings.Contains(rs[0]["content"].(string), "tagged correction") {
		t.Fatalf("rules after init --agent claude: %v", rs)
	}
	if again := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(again, "already set up") {
		t.Fatalf("second init changed something: %s", again)
	}
	ok(t, dir, "delete", rs[0]["id"].(string))
	if again := ok(t, dir, "init", "--agent", "claude"); !strings.Contains(again, "already set up") || len(rules()) != 0 {
		t.Fatalf("init brought a deleted auto-distill rule back: %s", again)
	}
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{broken"), 0o644)
	if r := run(t, dir, "", "init", "--agent", "claude"); r.code != 4 || !strings.Contains(r.err, "not valid JSON") {
		t.Fatalf("broken .mcp.json: %+v", r)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".mcp.json")); string(b) != "{broken" {
		t.Fatal("a broken .mcp.json was overwritten")
	}
	if r := run(t, dir, "", "init", "--agent", "vim"); r.code != 2 || !strings.Contains(r.err, "known: claude") {
		t.Fatalf("unknown agent: %+v", r)
	}
}

func TestSessionStartContext(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "api and handler", "api/server.go", "api/handler.go")
	commitFiles(t, dir, "api and handler again", "api/server.go", "api/handler.go")
	commitFiles(t, dir, "api and handler, third time", "api/server.go", "api/handler.go")
	ok(t, dir, "save", "never log request bodies: they hold customer data", "--type", "rule", "--pin")
	ok(t, dir, "save", "handoff: the retry work is half done, see server.go", "--type", "handoff")
	ok(t, dir, "save", "we chose chi over gin for the api router", "--type", "decision")
	ok(t, dir, "save", "temporary note", "--type", "progress")
	cmd := exec.Command(bin, "save", "the server.go timeout is 90 s, above the LB's 60 s", "--type", "insight")
	cmd.Dir = dir
	cmd.Env = append(cmd.Environ(), "GIT_AUTHOR_NAME=Tea Mate", "GIT_AUTHOR_EMAIL=mate@example.com")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	// Old memory: only what is pinned comes back at a session start; a
	// handoff of last month is not the last one.
	old := time.Now().AddDate(0, -3, 0).UTC().Format(time.RFC3339)
	ok(t, dir, "import", writeJSONL(t, `{"content":"the vendor API reference lives at docs/vendor.md","type":"reference","created":"`+old+`"}`,
		`{"content":"we deploy on Tuesdays only","type":"decision","created":"`+old+`","pinned":true}`,
		`{"content":"handoff: the old migration work","type":"handoff","created":"`+old+`"}`))
	// Words a file's name shares are not the file.
	ok(t, dir, "save", "the settings page of the server crashes on an empty form", "--type", "issue")
	pending := ok(t, dir, "save", "Never run migrations against the shared staging database from a laptop.", "--type", "insight", "--tag", "correction")
	// Corrections found by their words; statements that only look so are not.
	ok(t, dir, "save", "We never force-push to main.", "--type", "insight")
	ok(t, dir, "save", "Stop words are removed by the tokenizer before indexing.", "--type", "insight")
	// Working on server.go now, and init --agent claude touched its settings.
	os.WriteFile(filepath.Join(dir, "api", "server.go"), []byte("changed\n"), 0o644)
	os.MkdirAll(filepath.Join(dir, ".claude"), 0o755)
	os.WriteFile(filepath.Join(dir, ".claude", "settings.json"), []byte("{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{}\n"), 0o644)

	md := ok(t, dir, "hook", "session-start", "--format", "markdown")
	for _, want := range []string{"## Rules", "never log request bodies", "pinned", "## Last handoffs", "retry work is half done",
		"## Decisions and context", "chi over gin", "Tea Mate, teammate", "we deploy on Tuesdays only", "## Files you are working on: api/server.go\n", "api/handler.go (3×)", "timeout is 90 s",
		"## Pending rules", "Never run migrations"} {
		if !strings.Contains(md, want) {
			t.Errorf("session context lacks %q:\n%s", want, md)
		}
	}
	for _, unwanted := range []string{"temporary note", "vendor API reference", "old migration work"} {
		if strings.Contains(md, unwanted) {
			t.Errorf("the context has %q (ephemeral, or old and not pinned):\n%s", unwanted, md)
		}
	}
	rules := md[strings.Index(md, "## Pending rules"):]
	rules = rules[:strings.Index(rules[1:], "\n## ")+1]
	if !strings.Contains(rules, "We never force-push") || strings.Contains(rules, "Stop words") {
		t.Errorf("pending rules: want the correction, not the look-alike:\n%s", rules)
	}
	// Each item once, in its most specific section.
	for _, once := range []string{"Never run migrations", "timeout is 90 s", "settings page"} {
		if n := strings.Count(md, once); n != 1 {
			t.Errorf("%q appears %d times:\n%s", once, n, md)
		}
	}
	files := md[strings.Index(md, "## Files you are working on"):]
	if strings.Contains(files, "settings page") || !strings.Contains(files, "timeout is 90 s") {
		t.Errorf("the files' section matched words, not files:\n%s", files)
	}
	if id := strings.Fields(pending)[len(strings.Fields(pending))-1]; !strings.Contains(md, "Pending rules") || strings.Count(md, id[:8]) != 1 {
		t.Errorf("pending rule %s not shown exactly once:\n%s", id, md)
	}
	if small := ok(t, dir, "hook", "session-start", "--format", "markdown", "--budget", "400"); len(small) > 400 || !strings.Contains(small, "never log request bodies") {
		t.Fatalf("budgeted context (%d chars):\n%s", len(small), small)
	}
	var out struct {
		HookSpecificOutput struct {
			HookEventName     string `json:"hookEventName"`
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	r := run(t, dir, `{"session_id":"abc","hook_event_name":"SessionStart","source":"startup"}`, "hook", "session-start")
	if err := json.Unmarshal([]byte(r.out), &out); err != nil || out.HookSpecificOutput.HookEventName != "SessionStart" || !strings.Contains(out.HookSpecificOutput.AdditionalContext, "chi over gin") {
		t.Fatalf("claude hook output: %v %+v", err, r)
	}
	// Outside a repository the hook prints nothing and exits 0.
	if r := run(t, t.TempDir(), "", "hook", "session-start"); r.code != 0 || r.out != "" {
		t.Fatalf("session-start outside a repo: %+v", r)
	}
}

func TestStopHookWritesOneHandoffPerSession(t *testing.T) {
	dir := testrepo.NewRepo(t)
	in := `{"session_id":"sess-42","hook_event_name":"SessionStart","source":"startup"}`
	run(t, dir, in, "hook", "session-start")
	env := append(os.Environ(), "GIT_SYNAPTIC_SESSION=sess-42")
	for _, args := range [][]string{
		{"save", "the fix was to close the body before retrying", "--type", "issue"},
		{"save", "insight: chi's router matches longest prefix first", "--type", "insight"},
		{"save", "just a progress note", "--type", "progress"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%v: %v %s", args, err, out)
		}
	}
	commitFiles(t, dir, "retry: close bodies", "client.go")
	os.WriteFile(filepath.Join(dir, "wip.go"), []byte("package wip\n"), 0o644)

	stop := `{"session_id":"sess-42","hook_event_name":"Stop","stop_hook_active":false}`
	if r := run(t, dir, stop, "hook", "stop"); r.code != 0 || r.out != "" {
		t.Fatalf("stop hook: %+v", r)
	}
	handoffs := listJSON(t, dir, "--type", "handoff", "--session", "sess-42")
	if len(handoffs) != 1 {
		t.Fatalf("handoffs: %+v", handoffs)
	}
	h := handoffs[0].Content
	for _, want := range []string{"Session handoff: sess-42", "Memory saved: 1 insight, 1 issue, 1 progress.", "retry: close bodies", "Left uncommitted: wip.go",
		"Learnings:", "the fix was to close the body", "chi's router"} {
		if !strings.Contains(h, want) {
			t.Errorf("handoff lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(h[strings.Index(h, "Learnings:"):], "just a progress note") {
		t.Errorf("a plain progress note counted as a learning:\n%s", h)
	}
	// Stopping again with nothing new changes nothing; new work updates the
	// same handoff instead of adding one per turn.
	tip := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	run(t, dir, stop, "hook", "stop")
	if testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory") != tip {
		t.Fatal("an idle stop wrote memory")
	}
	cmd := exec.Command(bin, "save", "we chose to keep retries at 3", "--type", "decision")
	cmd.Dir, cmd.Env = dir, env
	cmd.Run()
	run(t, dir, `{"session_id":"sess-42"}`, "hook", "pre-compact")
	handoffs = listJSON(t, dir, "--type", "handoff", "--session", "sess-42")
	if len(handoffs) != 1 || !strings.Contains(handoffs[0].Content, "keep retries at 3") || handoffs[0].Edits != 1 {
		t.Fatalf("handoff not updated in place: %+v", handoffs)
	}
	// No session id: nothing written, exit 0.
	if r := run(t, dir, "", "hook", "stop"); r.code != 0 {
		t.Fatalf("stop without a session: %+v", r)
	}
	// The session's own handoff is in its agent's context already: its
	// prompts do not bring it back; another session's do.
	hid := handoffs[0].ID[:8]
	ask := func(session string) string {
		return run(t, dir, `{"session_id":"`+session+`","prompt":"what did we do about retries?"}`, "hook", "prompt", "--format", "markdown").out
	}
	if own := ask("sess-42"); strings.Contains(own, hid) {
		t.Errorf("the session's own handoff came back on its prompt:\n%s", own)
	}
	if other := ask("sess-43"); !strings.Contains(other, hid) {
		t.Errorf("another session's prompt lacks the recent handoff:\n%s", other)
	}
	// A session that only left files changed writes no handoff.
	run(t, dir, `{"session_id":"sess-idle","hook_event_name":"SessionStart"}`, "hook", "session-start")
	os.WriteFile(filepath.Join(dir, ".mcp.json"), []byte("{}\n"), 0o644)
	tip = testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	run(t, dir, `{"session_id":"sess-idle","hook_event_name":"Stop"}`, "hook", "stop")
	if testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory") != tip || len(listJSON(t, dir, "--type", "handoff", "--session", "sess-idle")) != 0 {
		t.Errorf("a session that left only uncommitted files wrote a handoff: %+v", listJSON(t, dir, "--type", "handoff", "--session", "sess-idle"))
	}
}

func TestPromptHookInjectsHotAndMatchingMemoryWithViewDecay(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "import", writeJSONL(t, `{"content":"we moved session storage from redis to postgres because of eviction losses","type":"decision","created":"2026-01-05T10:00:00Z"}`,
		`{"content":"the nightly export job runs at 02:00 UTC","type":"reference","created":"2026-01-06T10:00:00Z"}`))
	ok(t, dir, "save", "handoff: half way through the export refactor", "--type", "handoff")

	prompt := func(text string) string {
		in, _ := json.Marshal(map[string]string{"session_id": "s1", "prompt": text})
		return run(t, dir, string(in), "hook", "prompt", "--format", "markdown").out
	}
	// No cue: only the hot item (saved in the last 24 hours).
	out := prompt("continue")
	if !strings.Contains(out, "half way through the export refactor") || strings.Contains(out, "redis") {
		t.Fatalf("prompt without cues:\n%s", out)
	}
	// A question brings matching older memory.
	q := "why did we move session storage away from redis?"
	out = prompt(q)
	if !strings.Contains(out, "## Related to this prompt") || !strings.Contains(out, "eviction losses") || strings.Contains(out, "nightly export") {
		t.Fatalf("prompt with a question:\n%s", out)
	}
	// View decay over the session: full three times, then a digest, then a stub.
	for i := 0; i < 2; i++ {
		out = prompt(q)
	}
	if !strings.Contains(out, "because of eviction losses") {
		t.Fatalf("third view should be full:\n%s", out)
	}
	for i := 0; i < 8; i++ {
		out = prompt(q)
	}
	if !strings.Contains(out, "shown 11 times this session") {
		t.Fatalf("eleventh view should be a stub:\n%s", out)
	}
	// Another session starts fresh; Claude's JSON is the default format.
	in, _ := json.Marshal(map[string]string{"session_id": "s2", "prompt": q})
	var res struct {
		HookSpecificOutput struct{ HookEventName, AdditionalContext string } `json:"hookSpecificOutput"`
	}
	json.Unmarshal([]byte(run(t, dir, string(in), "hook", "prompt").out), &res)
	if res.HookSpecificOutput.HookEventName != "UserPromptSubmit" || !strings.Contains(res.HookSpecificOutput.AdditionalContext, "because of eviction losses") {
		t.Fatalf("claude output for a new session: %+v", res)
	}
	// A short prompt is about what the session's prompts before it were
	// about: within the exchange (the capture buffer) and after the stop
	// hook folded it.
	say := func(session, text string) string {
		in, _ := json.Marshal(map[string]string{"session_id": session, "prompt": text})
		return run(t, dir, string(in), "hook", "prompt", "--format", "markdown").out
	}
	if out := say("s3", "go on"); strings.Contains(out, "eviction losses") {
		t.Fatalf("a short first prompt brought matches:\n%s", out)
	}
	say("s4", "we need to look at session storage on redis again")
	if out := say("s4", "go on"); !strings.Contains(out, "## Related to this prompt") || !strings.Contains(out, "eviction losses") {
		t.Fatalf("a short prompt lacks what the exchange's first prompt matched:\n%s", out)
	}
	run(t, dir, `{"session_id":"s4","hook_event_name":"Stop"}`, "hook", "stop")
	if out := say("s4", "what else?"); !strings.Contains(out, "eviction losses") {
		t.Fatalf("a short prompt after a stop lacks what the session's earlier prompts matched:\n%s", out)
	}
}

func writeJSONL(t *testing.T, lines ...string) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(f, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return f
}

// What a session start shows counts as a use, as a prompt's injection
// does: a demoted entry the agent was shown is back in use. An archived
// entry that search --include-archived finds is looked at, not used: it
// stays archived.
func TestSessionStartCountsUsesAndArchivedSearchesDoNot(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "server", "api/server.go")
	days := func(n int) string { return time.Now().AddDate(0, 0, -n).UTC().Format(time.RFC3339) }
	ok(t, dir, "import", writeJSONL(t, `{"content":"api/server.go leaks a goroutine per request","type":"issue","created":"`+days(20)+`"}`,
		`{"content":"handoff: the flaky upload test is half fixed","type":"handoff","created":"`+days(5)+`"}`))
	type change struct{ ID, From, To string }
	maintain := func() map[string]change {
		var rep struct{ Changes []change }
		if err := json.Unmarshal([]byte(ok(t, dir, "maintain", "--json")), &rep); err != nil {
			t.Fatal(err)
		}
		out := map[string]change{}
		for _, c := range rep.Changes {
			out[c.ID] = c
		}
		return out
	}
	ids := map[string]string{}
	for _, e := range listJSON(t, dir, "--include-archived") {
		ids[e.Type] = e.ID
	}
	first := maintain()
	if first[ids["issue"]].To != "ephemeral" || len(first) != 2 {
		t.Fatalf("first pass: %+v", first)
	}
	os.WriteFile(filepath.Join(dir, "api", "server.go"), []byte("changed\n"), 0o644)
	md := run(t, dir, `{"session_id":"use-1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "leaks a goroutine") {
		t.Fatalf("the session start does not show the file's issue:\n%s", md)
	}
	if second := maintain(); second[ids["issue"]].To != "working" {
		t.Errorf("the issue the session start showed is not back in use: %+v", second)
	}
	if out := ok(t, dir, "search", "flaky upload", "--include-archived"); !strings.Contains(out, ids["handoff"][:8]) {
		t.Fatalf("search --include-archived lacks the archived handoff:\n%s", out)
	}
	if third := maintain(); len(third) != 0 || len(listJSON(t, dir, "--type", "handoff")) != 0 {
		t.Errorf("searching the archive revived the handoff: %+v", third)
	}
}

// Issues saved with the CLI (which loads no model) form a recurring
// pattern as MCP saves do: the next session start embeds the recent issues
// that wait for a vector, lists the pattern and keeps its issues longterm,
// even behind a backlog of entries that wait too.
func TestPatternsFromCLISaves(t *testing.T) {
	dir := testrepo.NewRepo(t)
	var backlog []string
	for i := range 300 {
		backlog = append(backlog, fmt.Sprintf(`{"content":"build note %d: the linker took %d seconds","type":"reference"}`, i, i))
	}
	ok(t, dir, "import", writeJSONL(t, backlog...))
	for _, text := range []string{"TestSync times out on CI under load", "TestSync timed out again on the CI runner", "TestSync times out on CI under heavy load"} {
		ok(t, dir, "save", text, "--type", "issue")
	}
	md := run(t, dir, `{"session_id":"p1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "## Recurring issues") || !strings.Contains(md, "[Pattern: seen 3 times since") {
		t.Fatalf("the session start lacks the CLI-saved pattern:\n%s", md)
	}
	for _, e := range listJSON(t, dir, "--type", "issue") {
		if e.Tier != "longterm" {
			t.Errorf("issue of a recurring pattern is %s, not longterm: %s", e.Tier, e.Content)
		}
	}
}

// A digest keeps a long first sentence whole: from its fourth showing in
// a session, an item is its first sentence, not a cut in its middle.
func TestPromptDigestKeepsTheFirstSentenceWhole(t *testing.T) {
	dir := testrepo.NewRepo(t)
	first := "The export job writes one file per tenant into the bucket named in EXPORT_BUCKET, compresses each with zstd at level 19, and signs the manifest with the key that the deploy pipeline rotates every ninety days."
	ok(t, dir, "save", first+" Restores read the manifest first and refuse unsigned ones.", "--type", "insight")
	var out string
	for range 4 {
		out = run(t, dir, `{"session_id":"digest-1","prompt":"continue"}`, "hook", "prompt", "--format", "markdown").out
	}
	if len(first) <= 200 || !strings.Contains(out, first+" …") || strings.Contains(out, "refuse unsigned") {
		t.Fatalf("the fourth showing is not the whole first sentence (%d characters):\n%s", len(first), out)
	}
}

// A correction found by its meaning alone is a pending rule at the
// session start too, once the model has embedded it (here, rules pending
// did): the hook reads the stored vectors of the entry and the templates.
func TestSessionStartShowsCorrectionsFoundByMeaning(t *testing.T) {
	dir := testrepo.NewRepo(t)
	const meant = "it is wrong, please do it differently"
	ok(t, dir, "save", meant, "--type", "insight")
	if out := ok(t, dir, "rules", "pending"); !strings.Contains(out, meant) {
		t.Fatalf("rules pending lacks the correction found by meaning:\n%s", out)
	}
	md := run(t, dir, `{"session_id":"m1"}`, "hook", "session-start", "--format", "markdown").out
	if !strings.Contains(md, "## Pending rules") || !strings.Contains(md, meant) {
		t.Fatalf("the session start lacks the correction rules pending lists:\n%s", md)
	}
}
