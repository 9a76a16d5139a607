// Package golden holds the repository the front ends' golden tests run
// on: five entries of fixed ids and times, and the clock they are read
// against.
package golden

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Now is the clock of the front ends' golden runs: every age they
// print is read against it.
var Now = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Repo is an empty repository (no commits to index) holding five
// entries of fixed ids and times, for the front ends' golden runs.
func Repo(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "repo")
	testrepo.Git(t, filepath.Dir(dir), "init", "-q", "-b", "main", dir)
	entry := func(id string, typ memory.Type, age time.Duration, content string, tags ...string) memory.Entry {
		return memory.Entry{V: 1, ID: id + strings.Repeat("0", 32-len(id)), Type: typ, Content: content, Tags: tags,
			Author: "Ann Example <ann@example.com>", Created: Now.Add(-age)}
	}
	var files []gitstore.File
	for _, e := range []memory.Entry{
		entry("3f2a", memory.TypeDecision, 40*24*time.Hour, "We chose postgres for billing: we need transactions across the ledger and the invoices.", "db", "billing"),
		entry("7b1c", memory.TypeIssue, 3*24*time.Hour, "The billing worker retries without backoff and floods the queue when postgres restarts.", "billing"),
		entry("9d4e", memory.TypeInsight, 26*time.Hour, "Retry with exponential backoff and jitter; cap at 30 s. The queue recovers within a minute."),
		entry("a0b5", memory.TypeHandoff, 2*time.Hour, "Left off: the migration script runs, the rollback is untested."),
		entry("c6f8", memory.TypeReference, 400*24*time.Hour, "Runbook for postgres failover: docs/runbooks/failover.md", "db", "ops"),
	} {
		doc, err := memory.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, gitstore.File{Path: memory.EntryPath(e.ID), Data: doc})
	}
	r, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, _, err := r.Append(context.Background(), "refs/synaptic/memory", files, gitstore.Signature{Name: "Ann Example", Email: "ann@example.com", When: Now}, "golden"); err != nil {
		t.Fatal(err)
	}
	return dir
}
