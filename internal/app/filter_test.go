package app

import (
	"errors"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// The CLI and the MCP server select entries through ParseFilter: names
// are checked, times read, bad input refused as invalid.
func TestParseFilter(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	f, err := ParseFilter(FilterSpec{Types: []string{"issue", "git_commit"}, Tier: "longterm", Since: "3d", Until: "2026-06-09", Limit: 5}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Types) != 2 || f.Types[1] != memory.TypeGitCommit || f.Tier != memory.TierLongterm || !f.Since.Equal(now.AddDate(0, 0, -3)) || f.Until.Format(time.DateOnly) != "2026-06-09" || f.Limit != 5 {
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
		if _, err := ParseFilter(bad, now); !errors.Is(err, ErrInvalidRequest) {
			t.Errorf("%+v: want an invalid error, got %v", bad, err)
		}
	}
}

// Times are read as dates, RFC 3339 stamps (in any case) and ages.
func TestParseTime(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2023-10-23T10:01:58Z":      time.Date(2023, 10, 23, 10, 1, 58, 0, time.UTC),
		"2023-10-23t10:01:58z":      time.Date(2023, 10, 23, 10, 1, 58, 0, time.UTC),
		"2023-10-23T10:01:58+02:00": time.Date(2023, 10, 23, 8, 1, 58, 0, time.UTC),
		"2w":                        now.AddDate(0, 0, -14),
		" 3D ":                      now.AddDate(0, 0, -3),
	} {
		if got, err := ParseTime(in, now); err != nil || !got.Equal(want) {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	if _, err := ParseTime("soon", now); err == nil {
		t.Error("soon was read as a time")
	}
}
