package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestSaveLogShowSearchEditPinArchive(t *testing.T) {
	dir := testrepo.NewRepo(t)
	dec := save(t, dir, "we chose postgres for billing because we need transactions", "--type", "decision", "--tag", "db", "--tag", "Billing")
	iss := save(t, dir, "flaky: TestSync times out on CI under load", "--type", "issue")

	// Stdin through -F -.
	r := run(t, dir, "runbook: restart the worker with systemctl restart billing-worker\n", "save", "--type", "reference", "-F", "-")
	if r.code != 0 || len(strings.TrimSpace(r.out)) != 32 {
		t.Fatalf("save from stdin: %+v", r)
	}

	rows := listJSON(t, dir)
	if len(rows) != 3 {
		t.Fatalf("want 3 entries (the empty -F - save must fail), got %d", len(rows))
	}
	got := map[string]row{}
	for _, x := range rows {
		got[x.ID] = x
	}
	if d := got[dec]; d.Type != "decision" || d.Tier != "working" || strings.Join(d.Tags, ",") != "db,billing" || !strings.Contains(d.Author, "test@example.com") {
		t.Fatalf("decision entry wrong: %+v", d)
	}
	if got[iss].Type != "issue" {
		t.Fatalf("issue entry wrong: %+v", got[iss])
	}

	// log: newest first, oneline, filters.
	log := ok(t, dir, "log", "--oneline")
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[2], dec[:8]) {
		t.Fatalf("log --oneline not newest first:\n%s", log)
	}
	if out := ok(t, dir, "log", "--oneline", "--type", "issue"); !strings.HasPrefix(out, iss[:8]) || strings.Count(out, "\n") != 1 {
		t.Fatalf("log --type issue:\n%s", out)
	}
	if out := ok(t, dir, "log", "--oneline", "--tag", "billing", "--tag", "db"); !strings.HasPrefix(out, dec[:8]) {
		t.Fatalf("log --tag:\n%s", out)
	}
	if out := ok(t, dir, "log", "--oneline", "--since", "1d", "--author", "Test User", "-n", "1"); strings.Count(out, "\n") != 1 {
		t.Fatalf("log -n 1:\n%s", out)
	}
	if out := ok(t, dir, "log", "--oneline", "--until", "2000-01-01"); out != "" {
		t.Fatalf("log --until 2000 should be empty:\n%s", out)
	}

	// show with a prefix; search.
	if out := ok(t, dir, "show", dec[:6]); !strings.Contains(out, "postgres for billing") || !strings.Contains(out, "Tags:   db, billing") {
		t.Fatalf("show:\n%s", out)
	}
	var hits []row
	if err := json.Unmarshal([]byte(ok(t, dir, "search", "postgres", "transactions", "--json")), &hits); err != nil || len(hits) == 0 || hits[0].ID != dec {
		t.Fatalf("search: %v %+v", err, hits)
	}
	// FTS syntax in user input is never interpreted.
	ok(t, dir, "search", `"unbalanced AND (NOT`, "-n", "3")

	// edit keeps history; tags add/remove; type change.
	ok(t, dir, "edit", dec[:8], "-m", "we chose postgres 16 for billing", "--add-tag", "pg", "--remove-tag", "db")
	var d struct {
		row
		Ops []struct {
			Kind string `json:"kind"`
		} `json:"ops"`
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "show", dec, "--json")), &d); err != nil {
		t.Fatal(err)
	}
	if d.Content != "we chose postgres 16 for billing" || strings.Join(d.Tags, ",") != "billing,pg" || d.Edits != 1 || len(d.Ops) != 1 {
		t.Fatalf("after edit: %+v", d)
	}
	ok(t, dir, "edit", dec[:8], "--tier", "longterm")

	// pin / archive.
	ok(t, dir, "pin", iss)
	ok(t, dir, "archive", iss)
	if ids(listJSON(t, dir))[iss] {
		t.Fatal("archived entry still listed")
	}
	if out := ok(t, dir, "search", "flaky"); strings.Contains(out, iss[:8]) {
		t.Fatalf("archived entry found by search:\n%s", out)
	}
	if out := ok(t, dir, "search", "flaky", "--include-archived"); !strings.Contains(out, iss[:8]) {
		t.Fatalf("--include-archived misses it:\n%s", out)
	}
	arch := listJSON(t, dir, "--archived")
	if len(arch) != 1 || !arch[0].Pinned || !arch[0].Archived {
		t.Fatalf("--archived: %+v", arch)
	}
	ok(t, dir, "unarchive", iss[:10])
	if !ids(listJSON(t, dir))[iss] {
		t.Fatal("unarchive did not restore")
	}

	// Nothing in the working tree; everything in refs.
	if st := testrepo.Git(t, dir, "status", "--porcelain"); st != "" {
		t.Fatalf("working tree touched:\n%s", st)
	}
	if n := testrepo.Git(t, dir, "ls-tree", "-r", "--name-only", "refs/synaptic/memory"); strings.Count(n, "entries/") != 3 || strings.Count(n, "ops/") != 5 {
		t.Fatalf("ref tree:\n%s", n)
	}

	// maintenance: nothing is old enough to decay yet.
	var mr struct {
		DryRun  bool              `json:"dry_run"`
		Checked int               `json:"checked"`
		Changes []json.RawMessage `json:"changes"`
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "maintain", "--dry-run", "--json")), &mr); err != nil || !mr.DryRun || mr.Checked != 3 || len(mr.Changes) != 0 {
		t.Fatalf("maintain --dry-run: %v %+v", err, mr)
	}
	if out := ok(t, dir, "maintain"); !strings.Contains(out, "checked 3 entries, changed 0") {
		t.Fatalf("maintain: %s", out)
	}

	// status --json.
	var st struct {
		Counts struct {
			Total  int            `json:"total"`
			ByType map[string]int `json:"by_type"`
		} `json:"counts"`
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "status", "--json")), &st); err != nil || st.Counts.Total != 3 || st.Counts.ByType["reference"] != 1 {
		t.Fatalf("status: %v %+v", err, st)
	}
}

func TestExitCodes(t *testing.T) {
	dir := testrepo.NewRepo(t)
	notRepo := t.TempDir()
	cases := []struct {
		name string
		dir  string
		args []string
		code int
		msg  string
	}{
		{"not a repo", notRepo, []string{"log"}, 128, "not a git repository"},
		{"unknown flag", dir, []string{"log", "--bogus"}, 2, "unknown flag"},
		{"unknown type", dir, []string{"save", "x", "--type", "nonsense"}, 2, "unknown type"},
		{"reserved type", dir, []string{"save", "x", "--type", "git_commit"}, 2, "reserved"},
		{"unknown id", dir, []string{"show", "abcdef12"}, 3, "no such memory entry"},
		{"bad id", dir, []string{"pin", "zz"}, 3, "no such memory entry"},
		{"bad time", dir, []string{"log", "--since", "the day before"}, 2, "cannot read time"},
		{"empty query", dir, []string{"search", "!!!"}, 2, "no words"},
		{"no remote", dir, []string{"sync"}, 3, "no remote"},
		{"missing args", dir, []string{"show"}, 2, "accepts 1 arg"},
		{"unknown command", dir, []string{"frobnicate"}, 1, "unknown command"},
	}
	for _, c := range cases {
		r := run(t, c.dir, "", c.args...)
		if r.code != c.code || !strings.Contains(r.err, c.msg) {
			t.Errorf("%s: exit %d (want %d), stderr %q (want %q)", c.name, r.code, c.code, r.err, c.msg)
		}
	}
}

func TestBadContentIsRefusedAndNothingIsWritten(t *testing.T) {
	dir := testrepo.NewRepo(t)
	save(t, dir, "a good entry")
	tip := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	huge := strings.Repeat("0123456789", 1<<20) // 10 MB
	cases := []struct {
		name, stdin string
		args        []string
		msg         string
	}{
		{"invalid utf-8", "caf\xe9 \xff\xfe", []string{"save", "-F", "-"}, "not valid UTF-8"},
		{"empty", "", []string{"save", "-F", "-"}, "content is empty"},
		{"blank", "  \n\t ", []string{"save", "-F", "-"}, "content is empty"},
		{"10 MB", huge, []string{"save", "-F", "-"}, "64 KiB"},
		{"control chars", "bell\x07 and escape\x1b[31m", []string{"save", "-F", "-"}, "control character"},
		{"NUL", "nul\x00byte", []string{"save", "-F", "-"}, "control character"},
		{"bad tag", "", []string{"save", "ok", "--tag", "has space"}, "tag"},
	}
	for _, c := range cases {
		r := run(t, dir, c.stdin, c.args...)
		if r.code != 4 || !strings.Contains(r.err, c.msg) {
			t.Errorf("%s: exit %d, stderr %q (want exit 4 and %q)", c.name, r.code, r.err, c.msg)
		}
	}
	if now := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory"); now != tip {
		t.Fatal("a refused save moved the memory ref")
	}
	// A 10 MB file through -F is refused the same way.
	big := filepath.Join(t.TempDir(), "big.txt")
	os.WriteFile(big, []byte(huge), 0o644)
	if r := run(t, dir, "", "save", "-F", big); r.code != 4 {
		t.Fatalf("10 MB file: %+v", r.code)
	}
	if len(listJSON(t, dir)) != 1 {
		t.Fatal("entries changed")
	}
}

func TestSecretsAreRefusedForSharedMemory(t *testing.T) {
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	dir := clones[0]
	samples := []string{
		"the deploy key is AKIAQYLPMN5HHHFPZAM2, rotate it monthly",
		"use ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA for the release bot",
		"slack bot: xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx",
		"OPENAI_API_KEY=sk-proj-Q3v9ZtY7pL2kX8mN4bR6cW1dF5gH0jS9aT3uV7eK",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA1c2x\n-----END RSA PRIVATE KEY-----",
		"staging db: password=Xk9#mQ2$vL7pR4wZ",
	}
	for _, s := range samples {
		r := run(t, dir, s, "save", "-F", "-")
		if r.code != 4 || !strings.Contains(r.err, "looks like a secret") || !strings.Contains(r.err, "--private") || !strings.Contains(r.err, "--allow-secret") {
			t.Errorf("secret not refused with guidance: %q → exit %d %q", s, r.code, r.err)
		}
		if strings.Contains(r.err, s) {
			t.Errorf("error message repeats the secret: %q", r.err)
		}
	}
	if r := run(t, dir, "", "note", "HEAD", samples[0]); r.code != 4 {
		t.Errorf("secret note not refused: %+v", r)
	}
	// Private memory accepts it and never leaves the clone.
	priv := save(t, dir, samples[0], "--private")
	forced := save(t, dir, "example key AKIAQYLPMN5HHHFPZAM2 from the AWS docs", "--allow-secret")
	ok(t, dir, "sync")
	remoteTree := testrepo.Git(t, remote, "ls-tree", "-r", "--name-only", "refs/synaptic/memory")
	if strings.Contains(remoteTree, priv) || !strings.Contains(remoteTree, forced) {
		t.Fatalf("remote tree wrong (private must be absent, forced present):\n%s", remoteTree)
	}
	if refs := testrepo.Git(t, remote, "for-each-ref", "--format=%(refname)"); strings.Contains(refs, "synaptic-local") {
		t.Fatalf("private ref pushed:\n%s", refs)
	}
	rows := listJSON(t, dir)
	if len(rows) != 2 {
		t.Fatalf("want 2 entries, got %+v", rows)
	}
	for _, r := range rows {
		if r.ID == priv && (!r.Private || r.Source != "refs/synaptic-local/memory") {
			t.Fatalf("private entry: %+v", r)
		}
	}
	// the listings mark the private entry, and only it
	for _, args := range [][]string{{"list"}, {"log", "--oneline"}} {
		for _, line := range strings.Split(ok(t, dir, args...), "\n") {
			if strings.Contains(line, priv[:8]) != strings.Contains(line, "[private]") {
				t.Errorf("%v: %q", args, line)
			}
		}
	}
	// Editing a shared entry into a secret is refused too.
	if r := run(t, dir, "", "edit", forced, "-m", "token ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"); r.code != 4 {
		t.Fatalf("secret edit accepted: %+v", r)
	}
}

func TestNotesAttachIndexAndShowInGitLog(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	// Git stays git: an amend before any commit note says nothing more
	// (notes.rewriteRef naming a ref that does not exist made git warn).
	if out := gitCombined(t, dir, "commit", "--amend", "-q", "--no-edit"); out != "" {
		t.Fatalf("an amend after init said:\n%s", out)
	}
	// An init of an earlier version set the plain name: init replaces it.
	testrepo.Git(t, dir, "config", "--unset-all", "notes.rewriteRef")
	testrepo.Git(t, dir, "config", "--add", "notes.rewriteRef", "refs/notes/synaptic")
	if out := ok(t, dir, "init"); !strings.Contains(out, "notes.rewriteRef -= refs/notes/synaptic") {
		t.Fatalf("init over an earlier one:\n%s", out)
	}
	if got := testrepo.Git(t, dir, "config", "--get-all", "notes.rewriteRef"); got != "refs/notes/synapti[c]" {
		t.Fatalf("notes.rewriteRef after init: %q", got)
	}
	head := testrepo.Git(t, dir, "rev-parse", "HEAD")
	printed := ok(t, dir, "note", "HEAD", "why: the retry loop papers over a race in the connection pool")
	if again := ok(t, dir, "note", head[:7], "second thought: fix the pool instead"); again != printed {
		t.Errorf("two notes on one commit printed %q and %q: one note, one id", printed, again)
	}
	if out := testrepo.Git(t, dir, "log", "--notes=synaptic", "-1"); !strings.Contains(out, "retry loop papers over") || !strings.Contains(out, "fix the pool") {
		t.Fatalf("git log --notes=synaptic:\n%s", out)
	}
	var hits []row
	json.Unmarshal([]byte(ok(t, dir, "search", "connection pool race", "--json")), &hits)
	if len(hits) != 1 || hits[0].Type != "note" || hits[0].Commit != head {
		t.Fatalf("note not searchable: %+v", hits)
	}
	// note prints the id show, search and feedback know the note by
	if printed != "note "+hits[0].ID+" on commit "+head+"\n" {
		t.Errorf("note printed %q; its entry id is %s", printed, hits[0].ID)
	}
	if out := ok(t, dir, "show", hits[0].ID[:10]); !strings.Contains(out, "on commit "+head) {
		t.Fatalf("show note:\n%s", out)
	}
	if r := run(t, dir, "", "pin", hits[0].ID); r.code != 2 {
		t.Fatalf("pinning a note should be refused: %+v", r)
	}
	if r := run(t, dir, "", "note", "no-such-rev", "text"); r.code != 2 || !strings.Contains(r.err, "not a commit") {
		t.Fatalf("bad rev: %+v", r)
	}
	// notes.rewriteRef from init: the note follows an amend.
	testrepo.Git(t, dir, "commit", "--amend", "-q", "-m", "initial (amended)")
	if out := testrepo.Git(t, dir, "log", "--notes=synaptic", "-1"); !strings.Contains(out, "retry loop") {
		t.Fatalf("note lost on amend:\n%s", out)
	}
}

func TestInitIsIdempotentAndPlainFetchPushCarryMemory(t *testing.T) {
	clones, _ := testrepo.NewReposAndRemote(t, 2)
	a, b := clones[0], clones[1]
	first := ok(t, a, "init")
	if !strings.Contains(first, "remote.origin.fetch") || !strings.Contains(first, "notes.rewriteRef") {
		t.Fatalf("init output:\n%s", first)
	}
	cfg := testrepo.Git(t, a, "config", "--get-all", "remote.origin.fetch")
	if again := ok(t, a, "init"); !strings.Contains(again, "already set up") {
		t.Fatalf("second init changed something:\n%s", again)
	}
	if cfg2 := testrepo.Git(t, a, "config", "--get-all", "remote.origin.fetch"); cfg2 != cfg {
		t.Fatalf("config changed by second init:\n%s\n%s", cfg, cfg2)
	}
	ok(t, b, "init")
	// A plain fetch on a remote without memory must not fail.
	testrepo.Git(t, b, "fetch")

	id := save(t, a, "plain git push carries this", "--type", "insight")
	ok(t, a, "note", "HEAD", "a note travels too")
	testrepo.Git(t, a, "push", "-q")
	testrepo.Git(t, b, "fetch", "-q")
	// Visible on the next command after a plain fetch.
	rows := listJSON(t, b)
	if !ids(rows)[id] || len(rows) != 2 {
		t.Fatalf("fetched memory not visible: %+v", rows)
	}
	// b adds memory too; plain push works after the implicit merge.
	id2 := save(t, b, "b's insight")
	testrepo.Git(t, b, "push", "-q")
	testrepo.Git(t, a, "fetch", "-q")
	if !ids(listJSON(t, a))[id2] {
		t.Fatal("a did not see b's entry after fetch")
	}
	var st struct {
		Remotes []struct {
			Ref, State string
		} `json:"remotes"`
	}
	json.Unmarshal([]byte(ok(t, a, "status", "--json")), &st)
	if len(st.Remotes) != 2 || st.Remotes[0].State != "in sync" {
		t.Fatalf("status remotes: %+v", st.Remotes)
	}
}

func TestCacheIsDisposable(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for i, c := range []string{"alpha decision about postgres", "beta insight about redis caching", "gamma issue with postgres vacuum", "delta handoff notes"} {
		id := save(t, dir, c, "--type", []string{"decision", "insight", "issue", "handoff"}[i], "--tag", "t"+string(rune('a'+i)))
		if i == 1 {
			ok(t, dir, "archive", id)
		}
		if i == 2 {
			ok(t, dir, "edit", id, "-m", "gamma issue with postgres autovacuum", "--add-tag", "pg")
		}
	}
	ok(t, dir, "note", "HEAD", "postgres note on the first commit")
	// search output without scores: recall counts (local statistics) do
	// not survive a deleted cache, and they weigh the scores.
	snapshot := func() string {
		return ok(t, dir, "list", "--json", "--include-archived", "-n", "0") + ok(t, dir, "search", "postgres") + ok(t, dir, "log", "--oneline")
	}
	before := snapshot()
	cacheFile := filepath.Join(dir, ".git", "synaptic", "cache.db")

	os.Remove(cacheFile)
	os.Remove(cacheFile + "-wal")
	os.Remove(cacheFile + "-shm")
	if after := snapshot(); after != before {
		t.Fatalf("rebuilt cache differs:\n%s\n---\n%s", before, after)
	}
	// A corrupt cache is detected and rebuilt, with a warning.
	os.Remove(cacheFile + "-wal")
	os.Remove(cacheFile + "-shm")
	if err := os.WriteFile(cacheFile, []byte(strings.Repeat("garbage!", 4096)), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, dir, "", "list", "--json", "--include-archived", "-n", "0")
	if r.code != 0 || !strings.Contains(r.err, "rebuilding") {
		t.Fatalf("corrupt cache: %+v", r)
	}
	if after := snapshot(); after != before {
		t.Fatalf("cache rebuilt from corruption differs")
	}
	// reindex forces it.
	if out := ok(t, dir, "reindex"); !strings.Contains(out, "reindexed 5 entries") {
		t.Fatalf("reindex: %s", out)
	}
	if after := snapshot(); after != before {
		t.Fatalf("reindexed cache differs")
	}
	// The cache is inside the git dir, shared by worktrees.
	wt := filepath.Join(t.TempDir(), "wt")
	testrepo.Git(t, dir, "worktree", "add", "-q", wt)
	if len(listJSON(t, wt)) != 4 {
		t.Fatal("worktree does not see memory")
	}
	if _, err := os.Stat(filepath.Join(dir, ".git", "worktrees", "wt", "synaptic")); err == nil {
		t.Fatal("worktree got its own cache")
	}
}

func TestGitSynapticRunsAsGitSubcommand(t *testing.T) {
	dir := testrepo.NewRepo(t)
	// git itself answers --help with a man page; -h reaches the command.
	cmd := exec.Command("git", "synaptic", "-h")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "save") || !strings.Contains(string(out), "Examples:") {
		t.Fatalf("git synaptic -h: %v\n%s", err, out)
	}
}

func TestImportIsAllOrNothing(t *testing.T) {
	dir := testrepo.NewRepo(t)
	var b strings.Builder
	for i := 0; i < 150; i++ { // over the pack threshold: blobs go in one pack
		b.WriteString(`{"content":"imported entry ` + strings.Repeat("x", i%7) + `","type":"decision","tags":["imp"],"created":"2026-01-02T03:04:05Z"}` + "\n")
	}
	f := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(f, []byte(b.String()), 0o644)
	if out := ok(t, dir, "import", f); !strings.Contains(out, "imported 150 entries") {
		t.Fatalf("import: %s", out)
	}
	testrepo.Git(t, dir, "fsck", "--strict", "--no-progress")
	rows := listJSON(t, dir, "--tag", "imp")
	if len(rows) != 150 || rows[0].Type != "decision" {
		t.Fatalf("imported rows: %d", len(rows))
	}
	if out := ok(t, dir, "log", "--oneline", "--until", "2026-01-03"); strings.Count(out, "\n") != 150 {
		t.Fatal("created time from the import not kept")
	}
	tip := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	bad := b.String() + `{"content":"key AKIAQYLPMN5HHHFPZAM2"}` + "\n"
	os.WriteFile(f, []byte(bad), 0o644)
	if r := run(t, dir, "", "import", f); r.code != 4 || !strings.Contains(r.err, "entry 151") {
		t.Fatalf("import with a secret on line 151: %+v", r)
	}
	os.WriteFile(f, []byte("{not json\n"), 0o644)
	if r := run(t, dir, "", "import", f); r.code != 4 || !strings.Contains(r.err, "line 1") {
		t.Fatalf("import of garbage: %+v", r)
	}
	if testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory") != tip {
		t.Fatal("a refused import wrote memory")
	}
}

func TestManPagesForGitHelp(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	cmd := exec.Command(manpagesBin, dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("manpages: %v\n%s", err, out)
	}
	for _, page := range []string{"git-synaptic.1", "git-synaptic-save.1", "git-synaptic-sync.1", "git-synaptic-hooks-install.1"} {
		b, err := os.ReadFile(filepath.Join(dir, page))
		if err != nil || !strings.Contains(string(b), ".TH \"GIT-SYNAPTIC") {
			t.Fatalf("%s: %v", page, err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "git-synaptic-save.1"))
	if !strings.Contains(string(b), "--private") || !strings.Contains(string(b), "EXAMPLE") {
		t.Fatal("save's man page lacks its flags or examples")
	}
}

func TestRelevanceFeedbackReranksAndHidesFromAgents(t *testing.T) {
	dir := testrepo.NewRepo(t)
	a := save(t, dir, "deploy checklist: run migrations before the rollout")
	b := save(t, dir, "deploy checklist: drain the queue before the rollout")
	order := func() []string {
		var hits []row
		json.Unmarshal([]byte(ok(t, dir, "search", "deploy checklist rollout", "--json")), &hits)
		var ids []string
		for _, h := range hits {
			ids = append(ids, h.ID)
		}
		return ids
	}
	ok(t, dir, "relevant", a, "--score", "0.9", "--objective", "release", "--reason", "the migration step bit us")
	if got := order(); len(got) != 2 || got[0] != a {
		t.Fatalf("relevant entry not first: %v", got)
	}
	ok(t, dir, "irrelevant", a, "--reason", "outdated")
	if got := order(); len(got) != 2 || got[0] != b {
		t.Fatalf("irrelevant entry not last: %v", got)
	}
	var d struct {
		Relevance  float64 `json:"relevance"`
		Irrelevant bool    `json:"irrelevant"`
		Ops        []struct {
			Kind, Reason string
		} `json:"ops"`
	}
	json.Unmarshal([]byte(ok(t, dir, "show", a, "--json")), &d)
	if !d.Irrelevant || d.Relevance != 0 || len(d.Ops) != 2 || d.Ops[0].Reason != "the migration step bit us" {
		t.Fatalf("feedback history: %+v", d)
	}
	// Agents do not get irrelevant memory.
	in, _ := json.Marshal(map[string]string{"session_id": "s", "prompt": "what is on the deploy checklist before the rollout?"})
	out := run(t, dir, string(in), "hook", "prompt", "--format", "markdown").out
	if strings.Contains(out, "run migrations") || !strings.Contains(out, "drain the queue") {
		t.Fatalf("prompt context with feedback:\n%s", out)
	}
	for _, bad := range [][]string{{"relevant", a, "--score", "0"}, {"relevant", a, "--score", "1.5"}} {
		if r := run(t, dir, "", bad...); r.code != 2 {
			t.Errorf("%v: %+v", bad, r)
		}
	}
}

// A repository without rules says so, and how to add one; --json is an
// empty list.
func TestRulesWhenThereAreNone(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	if out := ok(t, dir, "rules"); !strings.Contains(out, "no rules yet") || !strings.Contains(out, "--type rule") {
		t.Errorf("rules with none:\n%s", out)
	}
	if out := strings.TrimSpace(ok(t, dir, "rules", "--json")); out != "[]" {
		t.Errorf("rules --json with none: %q", out)
	}
}

// gitCombined runs git in dir and returns what it printed on both
// streams, failing the test when git fails.
func gitCombined(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
