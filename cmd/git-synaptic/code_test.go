package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// Through the binary: memory of an unmerged branch is marked and left out
// with --this-branch; memory on a detached HEAD is labelled by its
// commit; verify lists a stale entry and --confirm makes it current;
// conflicting or missing arguments exit 2.
func TestMemoryFollowsTheCodeEndToEnd(t *testing.T) {
	dir := testrepo.NewRepo(t)
	commitFiles(t, dir, "billing", "billing/retry.go")
	onMain := save(t, dir, "retries live in billing/retry.go", "--type", "decision")
	testrepo.Git(t, dir, "checkout", "-q", "-b", "feature/x")
	commitFiles(t, dir, "feature", "feature.txt")
	onFeature := save(t, dir, "retries move to the queue workers", "--type", "decision")
	testrepo.Git(t, dir, "checkout", "-q", "--detach", "HEAD")
	commitFiles(t, dir, "detached", "detached.txt")
	detached := save(t, dir, "retries tried on a detached head", "--type", "decision")
	testrepo.Git(t, dir, "checkout", "-q", "main")
	commitFiles(t, dir, "retry: rewrite", "billing/retry.go")

	var hits []struct {
		ID       string `json:"id"`
		Unmerged string `json:"unmerged"`
		Stale    []struct {
			Path    string `json:"path"`
			Commits int    `json:"commits"`
		} `json:"stale"`
	}
	json.Unmarshal([]byte(ok(t, dir, "search", "retries", "--json")), &hits)
	got := map[string]string{}
	for _, h := range hits {
		got[h.ID] = h.Unmerged
		if h.ID == onMain && (len(h.Stale) != 1 || h.Stale[0].Path != "billing/retry.go" || h.Stale[0].Commits != 1) {
			t.Errorf("stale files of the main entry: %+v", h.Stale)
		}
	}
	if len(got) != 3 || got[onMain] != "" || got[onFeature] != "feature/x" || !strings.HasPrefix(got[detached], "commit ") {
		t.Fatalf("search marks: %v", got)
	}
	if out := ok(t, dir, "search", "retries", "--this-branch"); strings.Contains(out, "queue workers") || !strings.Contains(out, "[billing/retry.go changed in 1 commit since]") {
		t.Errorf("search --this-branch:\n%s", out)
	}
	if r := run(t, dir, "", "search", "retries", "--this-branch", "--all-branches"); r.code != 2 {
		t.Errorf("--this-branch --all-branches: exit %d", r.code)
	}
	if r := run(t, dir, "", "verify", "--confirm"); r.code != 2 {
		t.Errorf("verify --confirm without ids: exit %d", r.code)
	}
	if r := run(t, dir, "", "verify", "nosuchid"); r.code != 3 {
		t.Errorf("verify of an unknown id: exit %d %s", r.code, r.err)
	}
	var rep struct {
		Checked int `json:"checked"`
		Stale   []struct {
			ID      string `json:"id"`
			Changes []struct {
				Recent []struct {
					Subject string `json:"subject"`
				} `json:"recent"`
			} `json:"changes"`
		} `json:"stale"`
	}
	json.Unmarshal([]byte(ok(t, dir, "verify", "--json")), &rep)
	if rep.Checked != 1 || len(rep.Stale) != 1 || rep.Stale[0].ID != onMain || rep.Stale[0].Changes[0].Recent[0].Subject != "retry: rewrite" {
		t.Fatalf("verify --json: %+v", rep)
	}
	ok(t, dir, "verify", "--confirm", onMain[:8])
	if out := ok(t, dir, "verify"); !strings.Contains(out, "all current") {
		t.Errorf("verify after confirming:\n%s", out)
	}
}
