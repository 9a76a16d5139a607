package app

import (
	"errors"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

// The CLI and the MCP server select entries through ParseFilter: names
// are checked, times read, bad input refused as invalid.
func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	f, err := ParseFilter(FilterSpec{Types: []string{"issue", "git_commit"}, Tier: "longterm", Since: "3d", Until: "2026-06-09", Limit: 5}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Types) != 2 || f.Types[1] != notes.TypeGitCommit || f.Tier != notes.TierLongterm || !f.Since.Equal(now.AddDate(0, 0, -3)) || f.Until.Format(time.DateOnly) != "2026-06-09" || f.Limit != 5 {
		t.Fatalf("filter: %+v", f)
	}
	// Within bounds Since further only when it is more recent.
	if f, _ := ParseFilter(FilterSpec{Since: "3d", Within: 36 * time.Hour}, now); !f.Since.Equal(now.Add(-36 * time.Hour)) {
		t.Fatalf("within: %v", f.Since)
	}
	if f, _ := ParseFilter(FilterSpec{Since: "1d", Within: 72 * time.Hour}, now); !f.Since.Equal(now.AddDate(0, 0, -1)) {
		t.Fatalf("within older than since: %v", f.Since)
	}
	for _, bad := range []FilterSpec{{Types: []string{"isue"}}, {Tier: "forever"}, {Since: "the day before"}, {Until: "soon"}, {Limit: -1}} {
		if _, err := ParseFilter(bad, now); !errors.Is(err, notes.ErrInvalid) {
			t.Errorf("%+v: want an invalid error, got %v", bad, err)
		}
	}
}
