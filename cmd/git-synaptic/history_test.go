package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// commitFiles writes the files (content made unique) and commits them.
func commitFiles(t *testing.T, dir, msg string, files ...string) {
	t.Helper()
	for _, f := range files {
		p := filepath.Join(dir, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		old, _ := os.ReadFile(p)
		os.WriteFile(p, append(old, []byte(msg+"\n")...), 0o644)
	}
	testrepo.Git(t, dir, append([]string{"add", "--"}, files...)...)
	testrepo.Git(t, dir, "commit", "-q", "-m", msg)
}

type suggestion struct {
	File       string  `json:"file"`
	Count      int     `json:"count"`
	Confidence float64 `json:"confidence"`
}

func TestHooksChainIndexAndUninstallRestores(t *testing.T) {
	dir := testrepo.NewRepo(t)
	hookDir := filepath.Join(dir, ".git", "hooks")
	userHook := "#!/bin/sh\necho ran >> \"$(git rev-parse --git-dir)/user-hook-ran\"\n"
	os.WriteFile(filepath.Join(hookDir, "post-rewrite"), []byte(userHook), 0o755)

	out := ok(t, dir, "init")
	if !strings.Contains(out, "hook post-rewrite: installed, chaining the existing hook") {
		t.Fatalf("init did not report chaining:\n%s", out)
	}
	if again := ok(t, dir, "init"); !strings.Contains(again, "already set up") {
		t.Fatalf("second init:\n%s", again)
	}
	// post-commit and post-merge hand commits to the warm process (off
	// in tests): the next command indexes them.
	for _, n := range []string{"post-commit", "post-merge"} {
		if b, err := os.ReadFile(filepath.Join(hookDir, n)); err != nil || !strings.Contains(string(b), "&)") {
			t.Fatalf("init did not install a detached %s hook: %v\n%s", n, err, b)
		}
	}
	if _, err := os.Stat(filepath.Join(hookDir, "post-checkout")); err == nil {
		t.Fatal("init installed a post-checkout hook")
	}
	ok(t, dir, "index")
	commitFiles(t, dir, "add the frobnicator", "frob.go")
	var hits []row
	json.Unmarshal([]byte(ok(t, dir, "search", "frobnicator", "--type", "git_commit", "--json")), &hits)
	if len(hits) == 0 || hits[0].ID != testrepo.Git(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("the next command did not index the commit: %+v", hits)
	}
	old := hits[0].ID
	// post-rewrite runs the user's hook and replaces the amended commit.
	testrepo.Git(t, dir, "commit", "-q", "--amend", "-m", "add the frobnicator, amended")
	if b, _ := os.ReadFile(filepath.Join(dir, ".git", "user-hook-ran")); strings.TrimSpace(string(b)) != "ran" {
		t.Fatal("the user's own post-rewrite hook did not run")
	}
	hits = nil
	json.Unmarshal([]byte(ok(t, dir, "search", "frobnicator", "--type", "git_commit", "--json")), &hits)
	if len(hits) == 0 || hits[0].ID != testrepo.Git(t, dir, "rev-parse", "HEAD") {
		t.Fatalf("amended commit: %+v", hits)
	}
	for _, h := range hits {
		if h.ID == old {
			t.Fatalf("the commit the amend replaced is still indexed: %+v", hits)
		}
	}
	if st := ok(t, dir, "hooks", "status"); !strings.Contains(st, "installed, chaining post-rewrite.pre-synaptic") {
		t.Fatalf("hooks status:\n%s", st)
	}
	ok(t, dir, "hooks", "uninstall")
	if b, _ := os.ReadFile(filepath.Join(hookDir, "post-rewrite")); string(b) != userHook {
		t.Fatalf("uninstall did not restore the user's hook:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(hookDir, "pre-push")); err == nil {
		t.Fatal("pre-push left behind")
	}
	// An older version's post-checkout hook, chaining the user's, goes on
	// install and the user's comes back.
	userCheckout := "#!/bin/sh\nexit 0\n"
	os.WriteFile(filepath.Join(hookDir, "post-checkout.pre-synaptic"), []byte(userCheckout), 0o755)
	os.WriteFile(filepath.Join(hookDir, "post-checkout"), []byte("#!/bin/sh\n# git-synaptic hook v2 (post-checkout)\ngit-synaptic hook post-checkout\n"), 0o755)
	if out := ok(t, dir, "hooks", "install"); !strings.Contains(out, "post-checkout") || !strings.Contains(out, "previous hook restored") {
		t.Fatalf("install did not retire the old post-checkout hook:\n%s", out)
	}
	if b, _ := os.ReadFile(filepath.Join(hookDir, "post-checkout")); string(b) != userCheckout {
		t.Fatalf("the user's post-checkout hook was not restored:\n%s", b)
	}
	// A failing git-synaptic never fails git: break the cache dir, amend.
	os.RemoveAll(filepath.Join(dir, ".git", "synaptic"))
	os.WriteFile(filepath.Join(dir, ".git", "synaptic"), []byte("not a directory"), 0o644)
	testrepo.Git(t, dir, "commit", "-q", "--amend", "-m", "amend with a broken cache")
	os.Remove(filepath.Join(dir, ".git", "synaptic"))
	// And running the hook command outside any repository exits 0.
	if r := run(t, t.TempDir(), "", "hook", "post-rewrite"); r.code != 0 {
		t.Fatalf("hook outside a repo: %+v", r)
	}
}

func TestIndexCochangesAndSuggest(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for i := 0; i < 4; i++ {
		commitFiles(t, dir, "feature step", "core/a.go", "core/a_test.go", "docs/a.md")
	}
	commitFiles(t, dir, "unrelated", "b.go")
	commitFiles(t, dir, "weird names", "dir with space/x y.go", "core/a.go", "caf\xe9.txt", "new\nline.txt")
	os.WriteFile(filepath.Join(dir, "blob.bin"), []byte{0, 1, 2, 3, 0, 255}, 0o644)
	commitFiles(t, dir, "binary", "blob.bin", "core/a.go")
	// A rename: history follows the file.
	testrepo.Git(t, dir, "mv", "core/a.go", "core/alpha.go")
	testrepo.Git(t, dir, "commit", "-q", "-m", "rename a to alpha")

	out := ok(t, dir, "index", "--json")
	var rep struct{ Indexed int }
	json.Unmarshal([]byte(out), &rep)
	if rep.Indexed != 9 { // initial + 4 + 1 + 1 + 1 + rename
		t.Fatalf("indexed %d commits, want 9: %s", rep.Indexed, out)
	}
	if again := ok(t, dir, "index"); !strings.Contains(again, "indexed 0 new commits") {
		t.Fatalf("re-index not incremental: %s", again)
	}
	// A rebuild of the cache walks the indexed history again: the
	// commits and their files are all there, nothing is left to index.
	ok(t, dir, "reindex")
	if again := ok(t, dir, "index"); !strings.Contains(again, "indexed 0 new commits") {
		t.Fatalf("reindex lost the indexed commits: %s", again)
	}

	var cc struct {
		Commits   int          `json:"commits"`
		Cochanges []suggestion `json:"cochanges"`
	}
	json.Unmarshal([]byte(ok(t, dir, "cochanges", "core/alpha.go", "--json")), &cc)
	if cc.Commits != 7 || len(cc.Cochanges) == 0 || cc.Cochanges[0].File != "core/a_test.go" || cc.Cochanges[0].Count != 4 {
		t.Fatalf("cochanges of the renamed file: %+v", cc)
	}
	got := map[string]bool{}
	for _, s := range cc.Cochanges {
		got[s.File] = true
	}
	// JSON cannot carry the raw byte of a non-UTF-8 name: it shows U+FFFD.
	for _, want := range []string{"dir with space/x y.go", "caf\uFFFD.txt", "new\nline.txt", "blob.bin"} {
		if !got[want] {
			t.Errorf("cochanges miss %q: %+v", want, cc.Cochanges)
		}
	}
	if text := ok(t, dir, "cochanges", "core/alpha.go"); !strings.Contains(text, "core/a_test.go") || !strings.Contains(text, "changed in 7 commits") || !strings.Contains(text, "caf\xe9.txt") {
		t.Fatalf("cochanges text:\n%s", text)
	}
	// a file only a sweeping commit (over the 20-file cap) touched says
	// why it has no partners; a count below 1 is refused
	var sweep []string
	for i := range 21 {
		sweep = append(sweep, fmt.Sprintf("vendor/v%d.go", i))
	}
	commitFiles(t, dir, "vendor everything", sweep...)
	if text := ok(t, dir, "cochanges", "vendor/v3.go"); !strings.Contains(text, "changed only in 1 commit of more than 20 files") {
		t.Errorf("cochanges of a file only a sweeping commit touched:\n%s", text)
	}
	if text := ok(t, dir, "cochanges", "no/such.go"); !strings.Contains(text, "no indexed commit touches it") {
		t.Errorf("cochanges of an unknown file:\n%s", text)
	}
	if r := run(t, dir, "", "cochanges", "core/alpha.go", "-n", "-1"); r.code != 2 {
		t.Errorf("cochanges -n -1: exit %d %s", r.code, r.err)
	}

	var sg struct {
		Changed     []string     `json:"changed"`
		Suggestions []suggestion `json:"suggestions"`
	}
	json.Unmarshal([]byte(ok(t, dir, "suggest", "--files", "core/alpha.go", "--json")), &sg)
	if len(sg.Suggestions) == 0 || sg.Suggestions[0].File != "core/a_test.go" {
		t.Fatalf("suggest --files: %+v", sg)
	}
	// From the working tree: staged change to a_test.go and docs → alpha.go.
	os.WriteFile(filepath.Join(dir, "core", "a_test.go"), []byte("changed\n"), 0o644)
	testrepo.Git(t, dir, "add", "core/a_test.go")
	json.Unmarshal([]byte(ok(t, dir, "suggest", "--staged", "--json")), &sg)
	if strings.Join(sg.Changed, ",") != "core/a_test.go" || len(sg.Suggestions) < 2 {
		t.Fatalf("suggest --staged: %+v", sg)
	}
	for _, s := range sg.Suggestions {
		if s.File == "core/a_test.go" {
			t.Fatal("suggested a file that is already in the change")
		}
	}
	for _, m := range []string{"rose", "count", "degree"} {
		ok(t, dir, "suggest", "--files", "core/alpha.go", "--method", m)
	}
	if r := run(t, dir, "", "suggest", "--method", "magic"); r.code != 2 {
		t.Fatalf("bad method: %+v", r)
	}
	// Indexed commits are searchable but stay out of the memory log.
	if out := ok(t, dir, "log", "--oneline"); out != "" {
		t.Fatalf("commits leaked into log:\n%s", out)
	}
	if out := ok(t, dir, "search", "rename", "alpha"); !strings.Contains(out, "git_commit") {
		t.Fatalf("commit not searchable:\n%s", out)
	}
}

func TestHistoryEdgeCases(t *testing.T) {
	// No commits at all.
	empty := filepath.Join(t.TempDir(), "empty")
	testrepo.Git(t, filepath.Dir(empty), "init", "-q", empty)
	if r := run(t, empty, "", "index"); r.code != 3 || !strings.Contains(r.err, "no commits yet") {
		t.Fatalf("index in an empty repo: %+v", r)
	}
	if r := run(t, empty, "", "hook", "post-commit"); r.code != 0 {
		t.Fatalf("hook in an empty repo: %+v", r)
	}
	if r := run(t, empty, "", "cochanges", "x.go"); r.code != 3 {
		t.Fatalf("cochanges in an empty repo: %+v", r)
	}
	if r := run(t, empty, "", "suggest"); r.code != 3 || !strings.Contains(r.err, "no commits yet") {
		t.Fatalf("suggest in an empty repo: %+v", r)
	}

	// Detached HEAD and a shallow clone.
	dir := testrepo.NewRepo(t)
	for i := 0; i < 5; i++ {
		commitFiles(t, dir, "step", "a.go", "b.go")
	}
	testrepo.Git(t, dir, "checkout", "-q", "--detach", "HEAD~1")
	if out := ok(t, dir, "index"); !strings.Contains(out, "indexed 5 new commits") {
		t.Fatalf("detached index: %s", out)
	}
	shallow := filepath.Join(t.TempDir(), "shallow")
	testrepo.Git(t, dir, "clone", "-q", "--depth", "2", "file://"+dir, shallow)
	if out := ok(t, shallow, "index"); !strings.Contains(out, "indexed 2 new commits") {
		t.Fatalf("shallow index: %s", out)
	}
	if out := ok(t, shallow, "cochanges", "a.go"); !strings.Contains(out, "b.go") {
		t.Fatalf("shallow cochanges: %s", out)
	}
}

func TestRewritesKeepNotesAndIndexCurrent(t *testing.T) {
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	commitFiles(t, dir, "base", "a.go")
	testrepo.Git(t, dir, "checkout", "-q", "-b", "feature")
	commitFiles(t, dir, "feature work", "b.go")
	ok(t, dir, "note", "HEAD", "why: b needs the new parser")
	old := testrepo.Git(t, dir, "rev-parse", "HEAD")
	testrepo.Git(t, dir, "checkout", "-q", "main")
	commitFiles(t, dir, "main moved", "c.go")
	testrepo.Git(t, dir, "checkout", "-q", "feature")
	cmd := exec.Command("git", "rebase", "-q", "main")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("rebase: %v %s", err, out)
	}
	now := testrepo.Git(t, dir, "rev-parse", "HEAD")
	if now == old {
		t.Fatal("rebase did not rewrite")
	}
	if n := testrepo.Git(t, dir, "notes", "--ref=synaptic", "show", "HEAD"); !strings.Contains(n, "new parser") {
		t.Fatalf("note did not follow the rebase: %q", n)
	}
	var hits []row
	raw := ok(t, dir, "search", "feature", "work", "--type", "git_commit", "--mode", "bm25", "--json")
	json.Unmarshal([]byte(raw), &hits)
	if len(hits) != 1 || hits[0].ID != now {
		t.Fatalf("post-rewrite did not replace the indexed commit (old %s new %s): %+v", old[:8], now[:8], hits)
	}
	json.Unmarshal([]byte(ok(t, dir, "search", "parser", "--mode", "bm25", "--json")), &hits)
	if len(hits) != 1 || hits[0].Commit != now || hits[0].Type != "note" {
		t.Fatalf("the note is not indexed on the new commit: %+v", hits)
	}
}

// Session-start context says files usually change together only when
// they shared at least three commits, and offers the memory about such a
// partner of the file being changed.
func TestPredictiveContextNeedsSupport(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for i := 0; i < 3; i++ {
		commitFiles(t, dir, "a with b", "a.go", "b.go")
	}
	commitFiles(t, dir, "a with c, once", "a.go", "c.go")
	ok(t, dir, "index")
	ok(t, dir, "save", "--type", "decision", "b.go holds the wire format: bump its version whenever it changes")
	ok(t, dir, "save", "--type", "decision", "c.go is generated; never edit it by hand")
	os.WriteFile(filepath.Join(dir, "a.go"), []byte("changed\n"), 0o644)
	md := ok(t, dir, "hook", "session-start", "--format", "markdown")
	if !strings.Contains(md, "usually changed with them: b.go (3×)") {
		t.Fatalf("no predictive context for a pair of 3 commits:\n%s", md)
	}
	files := md[strings.Index(md, "## Files you are working on"):]
	if !strings.Contains(files, "b.go holds the wire format") {
		t.Errorf("the memory about a usual partner is not offered with the file:\n%s", md)
	}
	if strings.Contains(files, "c.go") {
		t.Fatalf("a pair seen once was called usual:\n%s", md)
	}
}

// From a subdirectory, cochanges and suggest --files take paths as git
// does (relative to the current directory, or from the top with :/) and
// also from the top as before; a path outside the repository is refused.
// The text table shows the score that orders it and says what it means.
func TestCochangesTakePathsAsGitDoesAndShowTheirOrder(t *testing.T) {
	dir := testrepo.NewRepo(t)
	for range 3 {
		commitFiles(t, dir, "compat step", "compat/strlcpy.c", "compat/strlcat.c")
	}
	commitFiles(t, dir, "with the top", "compat/strlcpy.c", "tty.c")
	sub := filepath.Join(dir, "compat")
	cochanges := func(dir, file string) (string, int) {
		var cc struct {
			File      string       `json:"file"`
			Cochanges []suggestion `json:"cochanges"`
		}
		out := ok(t, dir, "cochanges", file, "--json")
		if err := json.Unmarshal([]byte(out), &cc); err != nil {
			t.Fatalf("cochanges %s: %v\n%s", file, err, out)
		}
		if len(cc.Cochanges) == 0 {
			return cc.File, 0
		}
		return cc.File, cc.Cochanges[0].Count
	}
	for _, c := range []struct{ dir, file string }{
		{sub, "strlcpy.c"}, {sub, "./strlcpy.c"}, {sub, "compat/strlcpy.c"}, {sub, ":/compat/strlcpy.c"},
		{sub, filepath.Join(sub, "strlcpy.c")}, {dir, "compat/strlcpy.c"},
	} {
		if file, count := cochanges(c.dir, c.file); file != "compat/strlcpy.c" || count != 3 {
			t.Errorf("cochanges %s in %s: file %q, top partner shares %d commits; want compat/strlcpy.c and 3", c.file, c.dir, file, count)
		}
	}
	var sg struct {
		Changed []string `json:"changed"`
	}
	json.Unmarshal([]byte(ok(t, sub, "suggest", "--files", "strlcat.c,../tty.c", "--json")), &sg)
	if strings.Join(sg.Changed, ",") != "compat/strlcat.c,tty.c" {
		t.Errorf("suggest --files from compat/ took %v", sg.Changed)
	}
	for _, outside := range []string{"../../etc/passwd", "/etc/passwd"} {
		if r := run(t, sub, "", "cochanges", outside); r.code != 2 || !strings.Contains(r.err, "outside the repository") {
			t.Errorf("cochanges %s: exit %d, %q", outside, r.code, r.err)
		}
	}
	text := ok(t, sub, "cochanges", "strlcpy.c")
	lines := strings.Split(strings.TrimSpace(text), "\n")
	if !strings.HasPrefix(lines[0], "compat/strlcpy.c changed in 4 commits") || !strings.HasPrefix(lines[1], "SCORE") ||
		!strings.Contains(lines[2], "compat/strlcat.c") || !strings.HasPrefix(lines[len(lines)-1], "ordered by SCORE:") {
		t.Errorf("cochanges text:\n%s", text)
	}
	if score := strings.Fields(lines[2])[0]; strings.Trim(score, "0123456789.") != "" {
		t.Errorf("the first row's score is %q:\n%s", score, text)
	}
}
