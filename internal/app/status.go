package app

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Stats counts memory's entries: all of them (Total, commits apart),
// archived, pinned and private ones, and by type and tier.
type Stats struct {
	Total    int            `json:"total"`
	Commits  int            `json:"indexed_commits"`
	Archived int            `json:"archived"`
	Pinned   int            `json:"pinned"`
	Private  int            `json:"private"`
	ByType   map[string]int `json:"by_type"`
	ByTier   map[string]int `json:"by_tier"`
}

// Problem is a memory object that could not be indexed: where it is (the
// ref, its path there, its object id) and why.
type Problem struct {
	Source, Path, Object, Message string
}

func (s *core) stats(ctx context.Context) (Stats, error) {
	var st Stats
	err := s.withCache(ctx, func(c *cache.Cache) error {
		cs, err := c.Stats(ctx)
		st = Stats(cs)
		return err
	})
	return st, err
}

// count is the number of entries in memory (Stats' Total), cheaply.
func (s *core) count(ctx context.Context) (int, error) {
	var n int
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		n, err = c.Count(ctx)
		return err
	})
	return n, err
}

// RefStatus is one memory ref.
type RefStatus struct {
	Ref     string `json:"ref"`
	Tip     string `json:"tip"`
	Indexed bool   `json:"indexed"`
}

// RemoteStatus compares local memory with what was last fetched from a remote.
type RemoteStatus struct {
	Remote     string `json:"remote"`
	Ref        string `json:"ref"`
	Ahead      int    `json:"ahead"`
	Behind     int    `json:"behind"`
	State      string `json:"state"`
	Configured bool   `json:"configured"`
}

// Status is the state of memory in this repository.
type Status struct {
	Project    string         `json:"project"`
	Stats      Stats          `json:"counts"`
	CachePath  string         `json:"cache"`
	CacheBytes int64          `json:"cache_bytes"`
	Refs       []RefStatus    `json:"refs"`
	Remotes    []RemoteStatus `json:"remotes"`
	Problems   []Problem      `json:"problems"`
	// Repaired lists where the cache had drifted from the refs; status
	// rebuilt it (empty when it was consistent).
	Repaired []string `json:"repaired,omitempty"`
	// Hooks maps each git hook git-synaptic uses to its state.
	Hooks map[string]string `json:"hooks,omitempty"`
	// Search is how search ranks here: "hybrid (MODEL, RUNTIME)" or
	// "lexical (BM25 only): WHY" (model status has the details).
	Search string `json:"search"`
	// Cochange is the co-change ranking's self-tuning (nil before git
	// synaptic index has seen enough history).
	Cochange *cochange.Tuning `json:"cochange_tuning,omitempty"`
	// ActivePatterns counts the recurring issues not yet resolved, from
	// the vectors already stored (nil when none are: status never loads
	// the model).
	ActivePatterns *int `json:"active_patterns,omitempty"`
	// Subscriptions are the repositories whose memory this one follows.
	Subscriptions []Subscription `json:"subscriptions,omitempty"`
	// Damaged lists memory refs whose history lacks objects ('git
	// synaptic repair' mends them); empty when all are complete.
	Damaged []Damage `json:"damaged,omitempty"`
}

// Overview is the status in a few lines, as the CLI and the MCP server
// show it: the counts by type and tier, how search ranks and the active
// recurring issues.
func (st Status) Overview() string {
	var b strings.Builder
	fmt.Fprintf(&b, "project %s: %d entries (%d archived, %d pinned, %d private), %d indexed commits\n", st.Project, st.Stats.Total, st.Stats.Archived, st.Stats.Pinned, st.Stats.Private, st.Stats.Commits)
	var parts []string
	for _, t := range append(append([]memory.Type{}, memory.SavableTypes...), memory.TypeNote) {
		if n := st.Stats.ByType[string(t)]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", t, n))
		}
	}
	if len(parts) > 0 {
		fmt.Fprintf(&b, "  by type: %s\n", strings.Join(parts, ", "))
	}
	parts = nil
	for _, t := range []memory.Tier{memory.TierEphemeral, memory.TierWorking, memory.TierLongterm} {
		parts = append(parts, fmt.Sprintf("%s %d", t, st.Stats.ByTier[string(t)]))
	}
	fmt.Fprintf(&b, "  by tier: %s\n", strings.Join(parts, ", "))
	fmt.Fprintf(&b, "search: %s\n", st.Search)
	if st.ActivePatterns != nil {
		fmt.Fprintf(&b, "recurring issues: %d active patterns (git synaptic patterns)\n", *st.ActivePatterns)
	}
	return b.String()
}

// Status reports counts, cache state, ref tips and remote sync state.
func (s *Service) Status(ctx context.Context) (Status, error) {
	st := Status{Project: s.project(ctx), CachePath: s.cachePath(), Search: s.searchDescription()}
	var err error
	if st.Stats, err = s.stats(ctx); err != nil {
		return st, err
	}
	if fi, err := os.Stat(s.cachePath()); err == nil {
		st.CacheBytes = fi.Size()
	}
	if wal, err := os.Stat(s.cachePath() + "-wal"); err == nil {
		st.CacheBytes += wal.Size()
	}
	if st.Damaged, err = s.damaged(ctx); err != nil {
		return st, err
	}
	if st.Repaired, err = s.verifyIndex(ctx); err != nil {
		return st, err
	}
	if len(st.Repaired) > 0 {
		if st.Stats, err = s.stats(ctx); err != nil {
			return st, err
		}
	}
	c, err := s.openCache()
	if err != nil {
		return st, err
	}
	tips, err := c.Tips(ctx)
	if err != nil {
		return st, err
	}
	local, _, err := s.memoryRefs()
	if err != nil {
		return st, err
	}
	for ref, h := range local {
		st.Refs = append(st.Refs, RefStatus{Ref: ref, Tip: h.String(), Indexed: tips[ref] == h.String()})
	}
	sort.Slice(st.Refs, func(i, j int) bool { return st.Refs[i].Ref < st.Refs[j].Ref })
	problems, err := c.Problems(ctx)
	if err != nil {
		return st, err
	}
	for _, p := range problems {
		st.Problems = append(st.Problems, Problem(p))
	}
	if h, err := s.hist.HooksStatus(ctx); err == nil {
		st.Hooks = h.Actions
	}
	if st.Cochange, err = s.hist.Tuning(ctx); err != nil {
		return st, err
	}
	if st.ActivePatterns, err = s.activePatterns(ctx, c); err != nil {
		return st, err
	}
	if st.Subscriptions, err = s.sharing().Subscriptions(ctx); err != nil {
		return st, err
	}
	if st.Remotes, err = s.remoteStatus(ctx); err != nil {
		return st, err
	}
	return st, nil
}

// remoteStatus says, for each remote and shared ref, how this clone's
// memory stands against the remote's as last fetched.
func (s *Service) remoteStatus(ctx context.Context) ([]RemoteStatus, error) {
	remotes, err := s.repo.Remotes(ctx)
	if err != nil {
		return nil, err
	}
	var out []RemoteStatus
	for _, r := range remotes {
		last, known := s.lastAddress(ctx, r)
		moved := known && last != s.remoteAddress(ctx, r)
		specs, _ := s.repo.ConfigGetAll(ctx, "remote."+r+".fetch")
		configured := false
		for _, sp := range specs {
			configured = configured || sp == fetchSpecs(r)[0]
		}
		for _, ref := range []string{SharedRef, gitstore.NotesRef} {
			tr := trackingRef(r, ref)
			lt, _ := s.log.Tip(ref)
			rt, _ := s.log.Tip(tr)
			rs := RemoteStatus{Remote: r, Ref: ref, Configured: configured}
			switch {
			case moved:
				// what it holds was fetched from its old address
				rs.State = "not fetched from its new address yet (git synaptic sync)"
			case !configured && rt.IsZero():
				// Memory a remote may hold is unknown until fetched.
				rs.State = "not fetched (git synaptic init sets up fetching)"
			case lt.IsZero() && rt.IsZero():
				rs.State = "empty"
			case rt.IsZero():
				rs.State = "not fetched or not pushed yet"
				rs.Ahead, _, _ = s.repo.AheadBehind(ctx, lt, rt)
			default:
				rs.Ahead, rs.Behind, err = s.repo.AheadBehind(ctx, lt, rt)
				if err != nil {
					rs.State = "unknown: " + err.Error()
					break
				}
				rs.State = syncState(rs.Ahead, rs.Behind)
			}
			out = append(out, rs)
		}
	}
	return out, nil
}

func syncState(ahead, behind int) string {
	switch {
	case ahead == 0 && behind == 0:
		return "in sync"
	case behind == 0:
		return fmt.Sprintf("ahead by %d (git synaptic sync to push)", ahead)
	case ahead == 0:
		return fmt.Sprintf("behind by %d (git synaptic sync to merge)", behind)
	}
	return fmt.Sprintf("diverged: %d ahead, %d behind (git synaptic sync)", ahead, behind)
}

// searchDescription says how search will rank without loading the model.
func (s *core) searchDescription() string {
	if m := s.model.loaded(); m != nil {
		return fmt.Sprintf("hybrid (BM25 + %s vectors, %s)", m.ModelID(), m.Backend())
	}
	m, err := embed.Find(s.model.name)
	if err != nil {
		return "lexical (BM25 only): " + err.Error()
	}
	runtime := "pure-Go runtime"
	if embed.FindORTLibrary() != "" {
		runtime = "ONNX Runtime"
	}
	return fmt.Sprintf("hybrid (BM25 + %s vectors, %s)", m.ID(), runtime)
}

// activePatterns counts the open recurring-issue patterns among the issues
// that have stored vectors; nil when no vectors are stored.
func (s *core) activePatterns(ctx context.Context, c *cache.Cache) (*int, error) {
	if ok, err := c.UseStoredModel(ctx); !ok || err != nil {
		return nil, err
	}
	g, err := s.patternsIn(ctx, c)
	if err != nil {
		return nil, err
	}
	n := len(g)
	return &n, nil
}
