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
	if r := run(t, bare, "", "suggest"); r.code != 4 || !strings.Contains(r.err, "bare repository") {
		t.Errorf("suggest in a bare repository: %+v", r)
	}
}
