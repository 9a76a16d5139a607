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

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/notes"
)

var longFloat = regexp.MustCompile(`-?\d+\.\d{7,}`)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// goldenNow is the clock of the golden runs: every age they print is
// read against it.
var goldenNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// goldenRepo is an empty repository (no commits to index) holding five
// entries of fixed ids and times.
func goldenRepo(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	testrepo.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	entry := func(id string, typ notes.Type, age time.Duration, content string, tags ...string) notes.Entry {
		return notes.Entry{V: 1, ID: id + strings.Repeat("0", 32-len(id)), Type: typ, Content: content, Tags: tags,
			Author: "Ann Example <ann@example.com>", Created: goldenNow.Add(-age)}
	}
	var files []gitstore.File
	for _, e := range []notes.Entry{
		entry("3f2a", notes.TypeDecision, 40*24*time.Hour, "We chose postgres for billing: we need transactions across the ledger and the invoices.", "db", "billing"),
		entry("7b1c", notes.TypeIssue, 3*24*time.Hour, "The billing worker retries without backoff and floods the queue when postgres restarts.", "billing"),
		entry("9d4e", notes.TypeInsight, 26*time.Hour, "Retry with exponential backoff and jitter; cap at 30 s. The queue recovers within a minute."),
		entry("a0b5", notes.TypeHandoff, 2*time.Hour, "Left off: the migration script runs, the rollback is untested."),
		entry("c6f8", notes.TypeReference, 400*24*time.Hour, "Runbook for postgres failover: docs/runbooks/failover.md", "db", "ops"),
	} {
		doc, err := notes.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, gitstore.File{Path: notes.EntryPath(e.ID), Data: doc})
	}
	r, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Append(context.Background(), "refs/synaptic/memory", files, gitstore.Signature{Name: "Ann Example", Email: "ann@example.com", When: goldenNow}, "golden"); err != nil {
		t.Fatal(err)
	}
	return dir
}

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
			dir := goldenRepo(t)
			var got string
			for _, args := range tc.runs {
				var out, errb bytes.Buffer
				e := &env{ctx: context.Background(), io: IO{In: strings.NewReader(""), Out: &out, Err: &errb}, dir: ".", now: func() time.Time { return goldenNow }}
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
