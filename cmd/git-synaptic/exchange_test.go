package main_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// Memory goes out as Markdown files a person edits in any editor and
// comes back as edits of the same entries (history kept, nothing
// duplicated, a second import a no-op), with files the person wrote saved
// as new entries; private and archived entries leave only when asked; an
// entry changed here after the export, or made private by an edit, refuses
// the whole import.
func TestExportMarkdownEditAndImportBack(t *testing.T) {
	dir := testrepo.NewRepo(t)
	decision := save(t, dir, "we chose postgres for billing", "--type", "decision", "--tag", "db")
	ref := save(t, dir, "the runbook lives in docs/ops.md", "--type", "reference", "--pin")
	priv := save(t, dir, "my own reminder: ask Bo about the cutover", "--private")
	old := save(t, dir, "we used to deploy by hand")
	ok(t, dir, "archive", old)

	out := filepath.Join(t.TempDir(), "memory")
	if got := ok(t, dir, "export", out); got != "exported 2 entries to "+out+"\n" {
		t.Fatalf("export printed %q", got)
	}
	files := mdFiles(t, out)
	if len(files) != 2 || !strings.HasPrefix(files[0], "decision/") || !strings.HasSuffix(files[0], "-"+decision[:8]+".md") || !strings.HasPrefix(files[1], "reference/") {
		t.Fatalf("exported files %v", files)
	}
	decisionFile, refFile := filepath.Join(out, files[0]), filepath.Join(out, files[1])
	text := readFile(t, decisionFile)
	for _, want := range []string{"---\nid: " + decision + "\ntype: decision\n", `tags: ["db"]`, `author: "Test User <test@example.com>"`, "\n---\nwe chose postgres for billing\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the decision's file lacks %q:\n%s", want, text)
		}
	}

	// a person edits two files and writes a third
	writeFile(t, decisionFile, strings.Replace(strings.Replace(text, "for billing", "for billing: we need row locks", 1), `tags: ["db"]`, "tags: [db, billing]", 1))
	writeFile(t, refFile, strings.Replace(readFile(t, refFile), "pinned: true\n", "", 1))
	writeFile(t, filepath.Join(out, "flaky.md"), "---\ntype: issue\ntags: [ci]\n---\nTestSync times out on CI under load\n")
	if got := ok(t, dir, "import", out); got != "imported 1 entry, updated 2, left 0 unchanged\n" {
		t.Fatalf("import of the edited export printed %q", got)
	}
	if got := ok(t, dir, "import", out); got != "imported 0 entries, updated 0, left 3 unchanged\n" {
		t.Errorf("a second import printed %q", got)
	}
	rows := listJSON(t, dir)
	byID := map[string]row{}
	issues := 0
	for _, r := range rows {
		byID[r.ID] = r
		if r.Type == "issue" {
			issues++
		}
	}
	if d := byID[decision]; d.Content != "we chose postgres for billing: we need row locks" || strings.Join(d.Tags, ",") != "db,billing" || d.Edits != 1 {
		t.Errorf("the edited decision: %+v", d)
	}
	if byID[ref].Pinned || issues != 1 || len(rows) != 4 {
		t.Errorf("after import: the reference pinned %v, %d issues, %d entries: %+v", byID[ref].Pinned, issues, len(rows), rows)
	}

	// an entry edited here after the export is not overwritten, and the
	// import writes nothing at all
	out2 := filepath.Join(t.TempDir(), "again")
	ok(t, dir, "export", out2)
	ok(t, dir, "edit", decision, "-m", "we chose postgres for billing and reporting")
	f := filepath.Join(out2, mdFiles(t, out2)[0])
	writeFile(t, f, strings.Replace(readFile(t, f), "row locks", "row locks and advisory locks", 1))
	writeFile(t, filepath.Join(out2, "new.md"), "a new thought that must not be saved alone\n")
	if r := run(t, dir, "", "import", out2); r.code != 4 || !strings.Contains(r.err, "changed here") {
		t.Errorf("import over a newer edit: exit %d %s", r.code, r.err)
	}
	if rows := listJSON(t, dir); len(rows) != 4 {
		t.Errorf("a refused import wrote entries: %+v", rows)
	}

	// private and archived entries leave only when asked; a shared entry
	// cannot be made private by editing its file
	out3 := filepath.Join(t.TempDir(), "all")
	if got := ok(t, dir, "export", out3, "--private", "--include-archived"); !strings.Contains(got, "exported 5 entries") { // with the issue
		t.Fatalf("export --private --include-archived: %q", got)
	}
	all := strings.Join(mdFiles(t, out3), " ")
	if !strings.Contains(all, priv[:8]) || !strings.Contains(all, old[:8]) {
		t.Errorf("the private or archived entry is missing: %s", all)
	}
	for _, name := range mdFiles(t, out3) { // private memory stays this user's on disk
		if st, err := os.Stat(filepath.Join(out3, name)); err != nil || (st.Mode().Perm() == 0o600) != strings.Contains(name, priv[:8]) {
			t.Errorf("%s: mode %v, %v", name, st.Mode(), err)
		}
	}
	for _, name := range mdFiles(t, out3) {
		if strings.Contains(name, ref[:8]) {
			p := filepath.Join(out3, name)
			writeFile(t, p, strings.Replace(readFile(t, p), "type: reference\n", "type: reference\nprivate: true\n", 1))
		}
	}
	if r := run(t, dir, "", "import", out3); r.code != 4 || !strings.Contains(r.err, "cannot become private") {
		t.Errorf("import making a shared entry private: exit %d %s", r.code, r.err)
	}

	// exporting again replaces the earlier export's files, not the others
	ok(t, dir, "export", out)
	if _, err := os.Stat(filepath.Join(out, "flaky.md")); err != nil {
		t.Errorf("export removed a file it did not write: %v", err)
	}
	for _, bad := range [][]string{{"export", t.TempDir() + "/x", "--format", "yaml"}, {"export", "-", "--format", "markdown"}, {"export", filepath.Dir(decisionFile)}} {
		if r := run(t, dir, "", bad...); r.code != 2 {
			t.Errorf("%v: exit %d %s", bad, r.code, r.err)
		}
	}
}

// JSON lines carry memory to another repository, where it is new.
func TestExportJSONLinesIntoAnotherRepository(t *testing.T) {
	a, b := testrepo.NewRepo(t), testrepo.NewRepo(t)
	save(t, a, "we chose postgres for billing", "--type", "decision", "--tag", "db")
	save(t, a, "TestSync times out on CI", "--type", "issue")
	lines := ok(t, a, "export", "-")
	if n := strings.Count(lines, "\n"); n != 2 || !strings.HasPrefix(lines, `{"id":"`) {
		t.Fatalf("export -:\n%s", lines)
	}
	// an edit that adds a credential to shared memory is refused
	leaked := strings.Replace(lines, "we chose postgres for billing", "we chose postgres; key AKIAQYLPMN5HHHFPZAM2", 1)
	if r := run(t, a, leaked, "import", "-"); r.code != 4 || !strings.Contains(r.err, "secret") {
		t.Errorf("import of an edit with a credential: exit %d %s", r.code, r.err)
	}
	// so is one that adds it as a tag (checked as written, not lower-cased)
	tagged := strings.Replace(lines, `"tags":["db"]`, `"tags":["db","AKIAQYLPMN5HHHFPZAM2"]`, 1)
	if r := run(t, a, tagged, "import", "-"); r.code != 4 || !strings.Contains(r.err, "secret") {
		t.Errorf("import of an edit adding a credential as a tag: exit %d %s", r.code, r.err)
	}
	for _, r := range listJSON(t, a) {
		if len(r.Tags) > 1 || strings.Contains(r.Content, "AKIA") {
			t.Errorf("a refused import changed %+v", r)
		}
	}
	r := run(t, b, lines, "import", "-", "--json")
	var rep struct {
		Imported  int
		Updated   []string
		Unchanged int
	}
	if err := json.Unmarshal([]byte(r.out), &rep); r.code != 0 || err != nil || rep.Imported != 2 || len(rep.Updated) != 0 {
		t.Fatalf("import into another repository: exit %d %s %s", r.code, r.out, r.err)
	}
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	ok(t, b, "export", file) // .jsonl: JSON lines without --format
	data := readFile(t, file)
	for _, want := range []string{`"content":"we chose postgres for billing"`, `"tags":["db"]`, `"type":"issue"`} {
		if !strings.Contains(data, want) {
			t.Errorf("%s lacks %s:\n%s", file, want, data)
		}
	}
	if got := ok(t, b, "import", file); got != "imported 0 entries, updated 0, left 2 unchanged\n" {
		t.Errorf("re-import into the same repository printed %q", got)
	}
	// paths are read as git -C reads them: from the -C directory
	parent := filepath.Dir(b)
	ok(t, parent, "-C", filepath.Base(b), "export", "out.jsonl")
	if _, err := os.Stat(filepath.Join(b, "out.jsonl")); err != nil {
		t.Errorf("export -C: %v", err)
	}
	writeFile(t, filepath.Join(b, "note.txt"), "read from beside the repository's files\n")
	ok(t, parent, "-C", filepath.Base(b), "save", "-F", "note.txt")
	if r := run(t, b, "", "export", "-", "--json"); r.code != 2 {
		t.Errorf("export - --json: exit %d", r.code)
	}
}

func mdFiles(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") && filepath.Dir(p) != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
