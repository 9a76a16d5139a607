package secrets

import (
	"bufio"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorpusOfFormats: every line of testdata/positives.txt (one
// credential of each format gitleaks and detect-secrets cover that a
// coding agent is likely to meet, plus the encodings and spellings that
// used to slip through) is found, as the kind the line names, and
// Redact leaves nothing Scan would find.
func TestCorpusOfFormats(t *testing.T) {
	f, err := os.Open("testdata/positives.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kind, text, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("malformed line %q", line)
		}
		n++
		var kinds []string
		for _, x := range Scan(text) {
			kinds = append(kinds, x.Kind)
		}
		found := false
		for _, k := range kinds {
			found = found || k == kind
		}
		if !found {
			t.Errorf("%s not found in %q (found %q)", kind, text, kinds)
		}
		if red, _ := Redact(text); len(Scan(red)) != 0 {
			t.Errorf("Redact(%q) = %q still holds %+v", text, red, Scan(red))
		}
	}
	if n < 40 {
		t.Fatalf("only %d lines read", n)
	}
}

// TestNoFalsePositivesInOrdinaryText: the prose and code of this
// repository (every non-test Go file, Markdown page and man page) holds
// no credential, so a scanner that finds one there would refuse
// ordinary memory.
func TestNoFalsePositivesInOrdinaryText(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, size := 0, 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if strings.HasPrefix(name, ".") && path != root || name == "testdata" || name == "bin" || name == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, "_test.go") || !(strings.HasSuffix(name, ".go") || strings.HasSuffix(name, ".md") || strings.HasSuffix(name, ".1")) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		size += len(b)
		if f := Scan(string(b)); len(f) > 0 {
			rel, _ := filepath.Rel(root, path)
			t.Errorf("%s: %s", rel, Describe(f))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("only %d files scanned from %s", files, root)
	}
	t.Logf("%d files, %d KiB of prose and code, no findings", files, size/1024)
}
