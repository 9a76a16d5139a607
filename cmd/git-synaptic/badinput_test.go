package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// Bad input gets a clear error and exit code 4, and nothing is written.
func TestBadInputIsRefusedClearly(t *testing.T) {
	dir := testrepo.NewRepo(t)
	f := filepath.Join(t.TempDir(), "in.jsonl")

	// Dates the cache cannot hold are refused on import, not shown as "197y ago".
	for date, want := range map[string]string{"1500-01-01T00:00:00Z": "between 1678 and 2261", "2300-01-01T00:00:00Z": "between 1678 and 2261", "0001-01-01T00:00:00Z": "not a date an entry can have"} {
		os.WriteFile(f, []byte(`{"content":"old","created":"`+date+`"}`+"\n"), 0o644)
		if r := run(t, dir, "", "import", f); r.code != 4 || !strings.Contains(r.err, want) {
			t.Errorf("import created %s: %+v", date, r)
		}
	}
	// One import is one commit built in memory: past the cap it is refused
	// before anything is written, saying how to split it.
	os.WriteFile(f, []byte(strings.Repeat(`{"content":"x"}`+"\n", 100_001)), 0o644)
	if r := run(t, dir, "", "import", f); r.code != 4 || !strings.Contains(r.err, "split the file") {
		t.Errorf("import of 100,001 lines: %+v", r)
	}
	// A line over the limit says which line and what the limit is.
	os.WriteFile(f, []byte(`{"content":"`+strings.Repeat("x", 2<<20)+`"}`+"\n"), 0o644)
	if r := run(t, dir, "", "import", f); r.code != 4 || !strings.Contains(r.err, "line 1 is longer than") || strings.Contains(r.err, "token too long") {
		t.Errorf("import of a huge line: %+v", r)
	}
	// A UTF-8 byte order mark (as Windows editors write) is accepted.
	os.WriteFile(f, []byte("\xef\xbb\xbf"+`{"content":"after a BOM"}`+"\n"), 0o644)
	if r := run(t, dir, "", "import", f); r.code != 0 {
		t.Errorf("import with a BOM: %+v", r)
	}
	if rows := listJSON(t, dir); len(rows) != 1 || rows[0].Content != "after a BOM" {
		t.Fatalf("entries after the imports: %+v", rows)
	}

	// A note may not grow past what is read back (1 MiB).
	os.WriteFile(f, []byte(strings.Repeat("a long line of commit notes\n", 2200)), 0o644) // 61.6 KB
	refused := 0
	for i := 0; i < 18 && refused == 0; i++ {
		r := run(t, dir, "", "note", "HEAD", "-F", f)
		switch {
		case r.code == 4 && strings.Contains(r.err, "over the 1048576-byte limit of a note"):
			refused = i
		case r.code != 0:
			t.Fatalf("append %d: %+v", i, r)
		}
	}
	if refused != 17 { // 17 × 61.6 KB passes 1 MiB
		t.Errorf("the note append past 1 MiB was number %d, want 17 refused", refused)
	}
	if rows := listJSON(t, dir, "--type", "note"); len(rows) != 1 || len(rows[0].Content) < 1_000_000 {
		t.Error("the note, just under the limit, is not indexed")
	}

	// suggest in a bare repository explains itself instead of git's error.
	bare := filepath.Join(t.TempDir(), "bare.git")
	testrepo.Git(t, filepath.Dir(bare), "clone", "-q", "--bare", dir, bare)
	if r := run(t, bare, "", "suggest"); r.code != 2 || !strings.Contains(r.err, "bare repository") {
		t.Errorf("suggest in a bare repository: %+v", r)
	}
}

// A session id with a NUL or an escape is refused where it enters (the
// hook, --session), so it is never recorded and later saves keep working;
// an author name with escapes (from git, or a teammate) is printed with
// its control characters visible, as git prints a remote's messages.
func TestControlCharactersInNamesAreRefusedOrShownVisibly(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	for _, id := range []string{"abc\u0000def", "x\u001b[31mred"} {
		in := `{"session_id":"` + strings.NewReplacer("\u0000", `\u0000`, "\u001b", `\u001b`).Replace(id) + `","hook_event_name":"SessionStart"}`
		// A hook never fails the agent: it says why and exits 0.
		if r := run(t, dir, in, "hook", "session-start"); r.code != 0 || !strings.Contains(r.err, "session_id") {
			t.Errorf("session-start with %q: %+v", id, r)
		}
		if strings.Contains(id, "\u0000") {
			continue // an argument cannot hold a NUL
		}
		if r := run(t, dir, "", "save", "with a bad session", "--session", id); r.code != 4 || !strings.Contains(r.err, "session id") {
			t.Errorf("save --session %q: %+v", id, r)
		}
	}
	// Nothing was recorded: an MCP save still works.
	c := startMCP(t, dir)
	if r := c.tool("context_save", map[string]any{"content": "saved over MCP after the bad hook"}); r.IsError {
		t.Fatalf("context_save after a bad session start: %+v", r)
	}

	evil := "Eve\u001b]0;pwned\u0007\u001b[2J"
	r := runEnv(t, dir, []string{"GIT_AUTHOR_NAME=" + evil, "GIT_COMMITTER_NAME=" + evil}, "save", "saved by a strange name")
	id := strings.TrimSpace(r.out)
	if r.code != 0 || len(id) != 32 {
		t.Fatalf("save by %q: %+v", evil, r)
	}
	for _, args := range [][]string{{"show", id}, {"log"}, {"list"}} {
		out := ok(t, dir, args...)
		if strings.ContainsAny(out, "\u001b\u0007") {
			t.Errorf("%v printed raw control characters: %q", args, out)
		}
		if args[0] == "show" && !strings.Contains(out, "Eve^[]0;pwned^G^[[2J") {
			t.Errorf("%v: the name is not shown visibly: %q", args, out)
		}
	}
}

// A note that git itself overwrites with one over the size limit leaves
// the index: its old text is not found as if it were still the note.
func TestNoteOverwrittenPastTheLimitLeavesTheIndex(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	ok(t, dir, "note", "HEAD", "the flamingo deploy needs a warm cache")
	if s := ok(t, dir, "search", "flamingo", "--mode", "bm25"); !strings.Contains(s, "flamingo") {
		t.Fatalf("the note is not found: %s", s)
	}
	big := filepath.Join(t.TempDir(), "big")
	os.WriteFile(big, []byte(strings.Repeat("an enormous replacement note\n", 40000)), 0o644) // 1.16 MB
	testrepo.Git(t, dir, "notes", "--ref=synaptic", "add", "-f", "-F", big, "HEAD")
	if s := ok(t, dir, "search", "flamingo", "--mode", "bm25"); strings.Contains(s, "flamingo") {
		t.Errorf("the overwritten note's old text is still found: %s", s)
	}
	if out := ok(t, dir, "status"); !strings.Contains(out, "unreadable") {
		t.Errorf("status does not name the note it cannot read: %s", out)
	}
}

// With no identity, save says how to set one in git's own words and
// writes nothing; with one git can work out (here from the environment,
// as git commit would), save works without any configuration.
func TestSaveWithoutAGitIdentity(t *testing.T) {
	dir := testrepo.NewRepo(t)
	testrepo.Git(t, dir, "config", "user.useConfigOnly", "true") // no guessing from user@host
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "EMAIL="}
	r := runWith(t, dir, "", env, "save", "we chose postgres")
	if r.code != 1 || !strings.Contains(r.err, "no git identity") || !strings.Contains(r.err, `git config --global user.email`) || strings.Contains(r.err, "*** Please tell me") {
		t.Errorf("save without an identity: exit %d\n%s", r.code, r.err)
	}
	if rows := listJSON(t, dir); len(rows) != 0 {
		t.Errorf("a failed save wrote %+v", rows)
	}
	env = append(env, "GIT_AUTHOR_NAME=Ada", "GIT_AUTHOR_EMAIL=ada@example.com")
	if r := runWith(t, dir, "", env, "save", "we chose postgres"); r.code != 0 {
		t.Fatalf("save with an identity from the environment: %+v", r)
	}
	if rows := listJSON(t, dir); len(rows) != 1 || rows[0].Author != "Ada <ada@example.com>" {
		t.Errorf("saved %+v", rows)
	}
}
