package app

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// FilterSpec selects entries as a front end receives the selection: names
// and times as text. ParseFilter checks and converts it, so that the CLI
// and the MCP server select alike.
type FilterSpec struct {
	Types []string // entry types; also note and git_commit
	Tags  []string // all must match
	Tier  string
	// Since and Until bound the creation time: a date (2026-01-31), RFC
	// 3339, today, yesterday, or an age (3d, 2.weeks, 12h).
	Since, Until string
	// Within keeps entries created this recently (0: no bound).
	Within                           time.Duration
	Author, Project, Branch, Session string
	IncludeArchived, OnlyArchived    bool
	Limit                            int // 0: all
	// Branches is how memory written on another branch's unmerged work
	// is read: "" (ranked below, marked), "this" (left out) or "all"
	// (ranked as any other, marked).
	Branches string
}

// ParseFilter checks spec and turns it into the cache's filter, ages
// counted back from now. Errors wrap ErrInvalidRequest.
func ParseFilter(spec FilterSpec, now time.Time) (Filter, error) {
	out := Filter{Tags: spec.Tags, Author: spec.Author, Project: spec.Project, Branch: spec.Branch, Session: spec.Session,
		IncludeArchived: spec.IncludeArchived, OnlyArchived: spec.OnlyArchived, Limit: spec.Limit}
	if spec.Limit < 0 {
		return out, Invalidf("the entry limit must be 0 or more")
	}
	for _, t := range spec.Types {
		if t == string(memory.TypeNote) || t == string(memory.TypeGitCommit) {
			out.Types = append(out.Types, memory.Type(t))
			continue
		}
		typ, err := memory.ParseType(t)
		if err != nil {
			return out, badRequest(err)
		}
		out.Types = append(out.Types, typ)
	}
	b, err := ParseBranches(spec.Branches)
	if err != nil {
		return out, err
	}
	out.Branches = b
	if spec.Tier != "" {
		tier, err := memory.ParseTier(spec.Tier)
		if err != nil {
			return out, badRequest(err)
		}
		out.Tier = tier
	}
	if spec.Since != "" {
		if out.Since, err = ParseTime(spec.Since, now); err != nil {
			return out, err
		}
	}
	if spec.Within > 0 {
		if t := now.Add(-spec.Within); t.After(out.Since) {
			out.Since = t
		}
	}
	if spec.Until != "" {
		if out.Until, err = ParseTime(spec.Until, now); err != nil {
			return out, err
		}
	}
	return out, nil
}

// Now is the Service's clock (Options.Now).
func (s *Service) Now() time.Time { return s.now() }

// Filter is ParseFilter on the Service's clock.
func (s *Service) Filter(spec FilterSpec) (Filter, error) { return ParseFilter(spec, s.now()) }

var relTime = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\d+)\s*[. ]?\s*(h|hours?|d|days?|w|weeks?|mo|months?|y|years?|min|minutes?)(\s+ago)?$`)
})

// ParseTime reads a point in time: a date (2026-01-31), RFC 3339, today,
// yesterday, or an age before now (3d, 2.weeks, 12h, 1 month ago). Errors
// wrap ErrInvalidRequest.
func ParseTime(s string, now time.Time) (time.Time, error) {
	// dates as given, but in upper case: RFC 3339's T and Z are upper case
	stamp := strings.ToUpper(strings.TrimSpace(s))
	s = strings.ToLower(stamp)
	switch s {
	case "today":
		y, m, d := now.Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	case "yesterday":
		y, m, d := now.AddDate(0, 0, -1).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, now.Location()), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, stamp, time.Local); err == nil {
			return t, nil
		}
	}
	if m := relTime().FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		switch u := m[2]; {
		case strings.HasPrefix(u, "min"):
			return now.Add(-time.Duration(n) * time.Minute), nil
		case strings.HasPrefix(u, "h"):
			return now.Add(-time.Duration(n) * time.Hour), nil
		case strings.HasPrefix(u, "d"):
			return now.AddDate(0, 0, -n), nil
		case strings.HasPrefix(u, "w"):
			return now.AddDate(0, 0, -7*n), nil
		case strings.HasPrefix(u, "mo"):
			return now.AddDate(0, -n, 0), nil
		case strings.HasPrefix(u, "y"):
			return now.AddDate(-n, 0, 0), nil
		}
	}
	return time.Time{}, Invalidf("cannot read time %q: use a date (2026-01-31), RFC 3339, or an age such as 3d, 2.weeks, 12h", s)
}
