package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo/golden"
)

var longFloat = regexp.MustCompile(`-?\d+\.\d{7,}`)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// The CLI's output, as a person reads it, against golden files: each case
// runs its commands in order in a repository of its own and prints each
// command, its standard output, its standard error and its exit code
// when not 0. go test -run TestGoldenOutput -update rewrites them.
func TestGoldenOutput(t *testing.T) {
	one := func(args ...string) [][]string { return [][]string{args} }
	for _, tc := range []struct {
		name string
		runs [][]string
	}{
		{"list", one("list")},
		{"log-oneline", one("log", "--oneline")},
		{"log-two", one("log", "-n", "2")},
		{"log-since", one("log", "--oneline", "--since", "4d", "--type", "issue,insight")},
		{"show", one("show", "3f2a")},
		{"show-json", one("show", "7b1c", "--json")},
		{"search-bm25", one("search", "postgres backoff", "--mode", "bm25")},
		{"search-bm25-json", one("search", "retry", "--mode", "bm25", "--json", "-n", "2")},
		{"show-unknown", one("show", "ffff")},
		{"search-no-words", one("search", "!!!", "--mode", "bm25")},
		{"pin-archive", [][]string{{"pin", "3f2a"}, {"archive", "7b1c", "c6f8"}, {"list"}, {"list", "--archived", "--json"}, {"unarchive", "c6f8"}, {"list", "--type", "reference"}}},
		{"edit", [][]string{{"edit", "9d4e", "-m", "Retry with exponential backoff and jitter; cap at 20 s.", "--add-tag", "queue"}, {"show", "9d4e"}}},
		{"export-jsonl", one("export", "-")},
		{"bad-input", [][]string{{"search", "x", "--mode", "fuzzy"}, {"list", "--type", "nosuch"}, {"list", "--tier", "forever"},
			{"save", "--type", "nosuch", "hello"}, {"save", ""}, {"pin", "ffff"}, {"pin", "3f2a", "ffff"}, {"show"}, {"log", "--since", "yesterday-ish"}, {"edit", "3f2a", "--tier", "forever"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := golden.Repo(t)
			var got string
			for _, args := range tc.runs {
				var out, errb bytes.Buffer
				e := &env{ctx: context.Background(), io: IO{In: strings.NewReader(""), Out: &out, Err: &errb}, dir: ".", now: func() time.Time { return golden.Now }}
				code := e.execute(append([]string{"-C", dir}, args...))
				got += fmt.Sprintf("$ git synaptic %s\n%s", strings.Join(args, " "), out.String())
				if errb.Len() > 0 {
					got += "[stderr]\n" + errb.String()
				}
				if code != 0 {
					got += fmt.Sprintf("[exit %d]\n", code)
				}
			}
			got = strings.ReplaceAll(got, dir, "$REPO")
			// scores to 6 digits: the last ones may differ where the
			// compiler fuses multiply-adds (arm64)
			got = longFloat.ReplaceAllStringFunc(got, func(f string) string {
				v, _ := strconv.ParseFloat(f, 64)
				return strconv.FormatFloat(v, 'g', 6, 64)
			})
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test -run TestGoldenOutput -update writes it)", err)
			}
			if got != string(want) {
				t.Errorf("output differs from %s (go test -run TestGoldenOutput -update after checking it):\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}
