package evaldata

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// A --name-status log written by WriteNameStatusLog reads back the same,
// odd paths and all, and git's own --name-status lines read as git means
// them.
func TestNameStatusLogRoundTrip(t *testing.T) {
	want := []Commit{
		{ID: "a1", Time: 100, Author: "ann", Files: []string{"x.go", "tab\there.go"}},
		{ID: "b2", Time: 200, Author: "bob", Files: []string{"y.go", "x.go", `"quoted".go`},
			Renames: []Rename{{From: "old/y.go", To: "y.go"}}, Deleted: []string{`"quoted".go`}},
	}
	var buf bytes.Buffer
	if err := WriteNameStatusLog(&buf, want); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "log")
	os.WriteFile(path, buf.Bytes(), 0o644)
	got, err := ReadNameOnlyLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back:\n%+v\nwant\n%+v", got, want)
	}

	gitLog := "--c3--300--cy\n\nR087\ta.go\tb.go\nC100\tb.go\tc.go\nA\td.go\nD\te.go\n\n--d4--250--dee\n\nplain/name.go\n"
	os.WriteFile(path, []byte(gitLog), 0o644)
	got, err = ReadNameOnlyLog(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	want = []Commit{
		{ID: "d4", Time: 250, Author: "dee", Files: []string{"plain/name.go"}},
		{ID: "c3", Time: 300, Author: "cy", Files: []string{"b.go", "c.go", "d.go", "e.go"},
			Renames: []Rename{{From: "a.go", To: "b.go"}}, Deleted: []string{"e.go"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("git's log:\n%+v\nwant\n%+v", got, want)
	}
}
