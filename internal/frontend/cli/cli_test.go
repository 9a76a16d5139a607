package cli

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

// runIn runs the CLI in process, in dir, and returns the exit code and
// what it printed.
func runIn(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Run(context.Background(), append([]string{"-C", dir}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errb})
	return code, out.String(), errb.String()
}

// Flags and arguments are checked in process, before any work: each bad
// use exits 2 with a message naming the problem; good ones get past the
// checks.
func TestFlagParsing(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"log", "--since", "the day before"}, config.ExitUsage, "cannot read time"},
		{[]string{"log", "--until", "soon"}, config.ExitUsage, "cannot read time"},
		{[]string{"log", "--type", "decisions"}, config.ExitUsage, "unknown type"},
		{[]string{"log", "--tier", "forever"}, config.ExitUsage, "unknown tier"},
		{[]string{"log", "-n", "-1"}, config.ExitUsage, "--max-count must be 0 or more"},
		{[]string{"search", "--type", "nope", "x"}, config.ExitUsage, "unknown type"},
		{[]string{"search"}, config.ExitUsage, "requires at least 1 arg"},
		{[]string{"search", "x", "--as-of", "soon"}, config.ExitUsage, "--as-of: "},
		{[]string{"log", "--no-such-flag"}, config.ExitUsage, "unknown flag"},
		{[]string{"index", "--since", "sometime"}, config.ExitUsage, "cannot read time"},
		{[]string{"cochanges"}, config.ExitUsage, "accepts 1 arg"},
		{[]string{"rules", "accept"}, config.ExitUsage, "accepts 1 arg"},
		{[]string{"no-such-command"}, config.ExitFailure, "unknown command"}, // as git: exit 1
		// requests the application cannot carry out are usage errors too
		{[]string{"subscribe", "../x", "."}, config.ExitUsage, "subscription name"},
		{[]string{"subscribe", "self", "."}, config.ExitUsage, "is this repository"},
		{[]string{"note", "no-such-rev", "text"}, config.ExitUsage, "not a commit"},
		{[]string{"search", "!!!"}, config.ExitUsage, "no words"},
		{[]string{"init", "--agent", "nosuchagent"}, config.ExitUsage, "nosuchagent"},
		// content refused is exit 4
		{[]string{"save", "ok", "--tag", "has space"}, config.ExitRefused, "tag"},
		{[]string{"save", "token ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"}, config.ExitRefused, "looks like a secret"},
		// good uses get past the checks
		{[]string{"log", "--since", "3d", "--type", "decision", "--tier", "longterm", "-n", "0"}, config.ExitOK, ""},
		{[]string{"list", "--type", "git_commit"}, config.ExitOK, ""},
	} {
		code, _, stderr := runIn(t, dir, tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.err) {
			t.Errorf("%v: exit %d (want %d), stderr %q (want %q)", tc.args, code, tc.code, stderr, tc.err)
		}
		if tc.code != config.ExitOK && !strings.Contains(stderr, "git-synaptic") {
			t.Errorf("%v: the message does not say who speaks: %q", tc.args, stderr)
		}
	}
}

// parse runs the command line in process up to the point where a command
// would start work, and returns the options it filled in.
func parse(t *testing.T, args ...string) any {
	t.Helper()
	var got any
	var errb bytes.Buffer
	e := &env{ctx: context.Background(), io: IO{In: strings.NewReader(""), Out: &errb, Err: &errb}, dir: ".", parsed: func(o any) { got = o }}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetOut(&errb)
	root.SetErr(&errb)
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, errb.String())
	}
	if got == nil {
		t.Fatalf("%v: no command ran", args)
	}
	return got
}

// Every command's flags and arguments land in its options as written.
func TestOptionsFromFlags(t *testing.T) {
	lf := func(limit int) filterFlags { return filterFlags{limit: limit} }
	for _, tc := range []struct {
		args []string
		want any
	}{
		{[]string{"init", "--agent", "claude", "--no-push", "--json"}, &initOptions{noPush: true, json: true, agents: []string{"claude"}}},
		{[]string{"init", "--agent", "codex,cursor", "--agent", "auto", "--remove"}, &initOptions{remove: true, agents: []string{"codex", "cursor", "auto"}}},
		{[]string{"status", "--json"}, &statusOptions{json: true}},
		{[]string{"note", "HEAD", "why", "so", "-F", "f.md", "--allow-secret"}, &noteOptions{file: "f.md", allowSecret: true, args: []string{"HEAD", "why", "so"}}},
		{[]string{"sync", "upstream", "--json"}, &syncOptions{json: true, args: []string{"upstream"}}},
		{[]string{"maintain", "--dry-run"}, &maintainOptions{dryRun: true}},
		{[]string{"reindex"}, &reindexOptions{}},
		{[]string{"patterns", "--json"}, &patternsOptions{json: true}},
		{[]string{"patterns", "resolve", "3f2a"}, &patternsResolveOptions{args: []string{"3f2a"}}},
		{[]string{"consolidate"}, &consolidateOptions{}},
		{[]string{"rules"}, &rulesListOptions{}},
		{[]string{"rules", "--json"}, &rulesListOptions{json: true}},
		{[]string{"rules", "list", "--json"}, &rulesListOptions{json: true}},
		{[]string{"rules", "pending"}, &rulesPendingOptions{}},
		{[]string{"rules", "accept", "3f2a", "--label", "use-pnpm"}, &ruleVerdictOptions{accept: true, label: "use-pnpm", args: []string{"3f2a"}}},
		{[]string{"rules", "dismiss", "3f2a"}, &ruleVerdictOptions{args: []string{"3f2a"}}},
		{[]string{"index", "--all", "--since", "90d", "--json"}, &indexOptions{all: true, json: true, since: "90d"}},
		{[]string{"index", "--branch", "main"}, &indexOptions{branch: "main"}},
		{[]string{"cochanges", "go.mod", "-n", "5", "--method", "rose"}, &cochangesOptions{cochangeFlags: cochangeFlags{maxCount: 5, method: "rose"}, args: []string{"go.mod"}}},
		{[]string{"suggest", "--staged", "--files", "a.go,b.go", "--json"}, &suggestOptions{cochangeFlags: cochangeFlags{json: true, method: "weighted", maxCount: 10}, staged: true, files: []string{"a.go", "b.go"}}},
		{[]string{"model", "install", "use-lite", "--ort", "--from", "/m"}, &modelInstallOptions{from: "/m", python: "/usr/bin/python3", withORT: true, args: []string{"use-lite"}}},
		{[]string{"model", "list", "--json"}, &modelListOptions{json: true}},
		{[]string{"model", "status"}, &modelStatusOptions{}},
		{[]string{"embed", "--json"}, &embedOptions{json: true}},
		{[]string{"hook", "session-start", "--budget", "8000", "--format", "markdown"}, &hookOptions{budget: 8000, format: "markdown", agent: "claude", args: []string{"session-start"}}},
		{[]string{"hook", "prompt", "--agent", "cursor"}, &hookOptions{format: "json", agent: "cursor", args: []string{"prompt"}}},
		{[]string{"hook", "post-rewrite", "amend"}, &hookOptions{format: "json", agent: "claude", args: []string{"post-rewrite", "amend"}}},
		{[]string{"hooks", "install"}, &hooksOptions{action: "install"}},
		{[]string{"hooks", "status"}, &hooksOptions{action: "status"}},
		{[]string{"mcp"}, &mcpOptions{}},
		{[]string{"save", "we", "chose", "pg", "-t", "decision", "--tag", "db", "--tag", "x", "--pin", "--private", "--related", "3f2a", "--session", "s1", "--agent", "a1", "--json"},
			&saveOptions{typ: "decision", tags: []string{"db", "x"}, related: []string{"3f2a"}, pin: true, private: true, js: true, session: "s1", agentID: "a1", args: []string{"we", "chose", "pg"}}},
		{[]string{"save", "-F", "-", "--tier", "longterm", "--allow-secret"}, &saveOptions{typ: "insight", tier: "longterm", file: "-", allowSecret: true, args: []string{}}},
		{[]string{"pin", "a", "b"}, &markOptions{mark: "pin", on: true, ids: []string{"a", "b"}}},
		{[]string{"unpin", "a"}, &markOptions{mark: "pin", ids: []string{"a"}}},
		{[]string{"archive", "a"}, &markOptions{mark: "archive", on: true, ids: []string{"a"}}},
		{[]string{"unarchive", "a"}, &markOptions{mark: "archive", ids: []string{"a"}}},
		{[]string{"edit", "3f2a", "-m", "", "--add-tag", "db", "--remove-tag", "wip", "--tier", "longterm", "-t", "decision"},
			&editOptions{typ: "decision", tier: "longterm", addTags: []string{"db"}, removeTags: []string{"wip"}, id: "3f2a", hasMessage: true}},
		{[]string{"edit", "3f2a"}, &editOptions{id: "3f2a"}},
		{[]string{"import", "-", "--private"}, &importOptions{private: true, path: "-"}},
		{[]string{"relevant", "3f2a", "--score", "0.5", "--reason", "r", "--objective", "o"}, &feedbackOptions{relevant: true, score: 0.5, reason: "r", objective: "o", args: []string{"3f2a"}}},
		{[]string{"irrelevant", "3f2a"}, &feedbackOptions{args: []string{"3f2a"}}},
		{[]string{"delete", "a", "b", "--purge"}, &deleteOptions{purge: true, args: []string{"a", "b"}}},
		{[]string{"log", "--oneline", "-n", "5", "--type", "decision,issue", "--tag", "db", "--since", "3d", "--no-pager"},
			&logOptions{filter: filterFlags{types: []string{"decision", "issue"}, tags: []string{"db"}, since: "3d", limit: 5}, oneline: true, noPager: true}},
		{[]string{"log", "--archived", "--author", "alice", "--session", "s1", "--branch", "main", "--project", "p", "--tier", "working", "--until", "1d"},
			&logOptions{filter: filterFlags{onlyArchived: true, author: "alice", session: "s1", branch: "main", project: "p", tier: "working", until: "1d"}}},
		{[]string{"list", "--include-archived", "--json"}, &logOptions{filter: filterFlags{includeArchived: true, limit: 50}, json: true, table: true}},
		{[]string{"list"}, &logOptions{filter: lf(50), table: true}},
		{[]string{"show", "3f2a", "--json"}, &showOptions{json: true, args: []string{"3f2a"}}},
		{[]string{"search", "flaky", "test", "--mode", "bm25", "--explain", "-n", "3"}, &searchOptions{filter: lf(3), mode: "bm25", explain: true, args: []string{"flaky", "test"}}},
		{[]string{"search", "last", "week", "--as-of", "2026-01-31"}, &searchOptions{filter: lf(10), mode: "auto", asOf: "2026-01-31", args: []string{"last", "week"}}},
	} {
		if got := parse(t, tc.args...); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%v:\n got %+v\nwant %+v", tc.args, got, tc.want)
		}
	}
}

// A cache a newer git-synaptic wrote is not rebuilt for this one: the
// command exits 5, says what to do, and leaves the file as it was.
func TestNewerCacheExitsUnsupported(t *testing.T) {
	dir := testrepo.NewRepo(t)
	if code, _, stderr := runIn(t, dir, "save", "the cache is v21 today"); code != config.ExitOK {
		t.Fatalf("save: exit %d: %s", code, stderr)
	}
	path := filepath.Join(dir, ".git", "synaptic", "cache.db")
	newer := cache.SchemaVersion + 1
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, newer)); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"search", "cache"}, {"list"}} {
		code, _, stderr := runIn(t, dir, args...)
		if code != config.ExitUnsupported || !strings.Contains(stderr, "newer git-synaptic") || !strings.Contains(stderr, "git synaptic reindex") {
			t.Errorf("%v: exit %d (want %d), stderr %q", args, code, config.ExitUnsupported, stderr)
		}
	}
	var v int
	if err := db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil || v != newer {
		t.Errorf("the cache is at v%d (%v), want it left at v%d", v, err, newer)
	}
}
