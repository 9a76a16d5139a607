package app

import (
	"context"
	"sort"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Change is one thing maintenance did (or would do) to an entry.
type Change struct {
	ID       string      `json:"id"`
	Type     memory.Type `json:"type"`
	From     memory.Tier `json:"from"`
	To       memory.Tier `json:"to"`
	Archived bool        `json:"archived"`
	Reason   string      `json:"reason"`
}

// MaintainReport lists what a maintenance pass changed.
type MaintainReport struct {
	DryRun  bool     `json:"dry_run"`
	Checked int      `json:"checked"`
	Changes []Change `json:"changes"`
}

// Maintain recomputes every entry's tier and decay (memory.Decay) from its
// authored state and this clone's access statistics, at the Service's
// clock, and reports the changes. The results are derived, local data: they
// change what search and list show here, never the shared memory, and any
// authored change to an entry (edit, pin, unarchive...) clears them until
// the next pass.
func (s *Memory) Maintain(ctx context.Context, dryRun bool) (MaintainReport, error) {
	return s.maintain(ctx, cache.DecayPass{All: true, DryRun: dryRun})
}

// maintainDue is Maintain for the entries due only (see cache.DecayPass):
// what a session start runs, without judging 10k entries each time.
func (s *core) maintainDue(ctx context.Context) (MaintainReport, error) {
	return s.memory().maintain(ctx, cache.DecayPass{})
}

// maintain runs pass with the Service's clock and memory.Decay.
func (s *Memory) maintain(ctx context.Context, pass cache.DecayPass) (MaintainReport, error) {
	rep := MaintainReport{DryRun: pass.DryRun, Changes: []Change{}}
	c, err := s.ready(ctx)
	if err != nil {
		return rep, err
	}
	pass.Now = s.now()
	pass.Judge = func(st cache.Standing) cache.Verdict {
		v := memory.Decay(st.Usage, pass.Now)
		auto := v.Tier
		if auto == st.Usage.Tier {
			auto = "" // nothing beyond the authored tier
		}
		out := cache.Verdict{Tier: auto, Archived: v.Archived, Next: memory.DecayNext(st.Usage, pass.Now)}
		if auto == st.AutoTier && v.Archived == st.AutoArchived {
			return out
		}
		from := st.Usage.Tier
		if st.AutoTier != "" {
			from = st.AutoTier
		}
		if st.Usage.Type != memory.TypeGitCommit || v.Archived {
			rep.Changes = append(rep.Changes, Change{ID: st.ID, Type: st.Usage.Type, From: from, To: v.Tier, Archived: v.Archived, Reason: v.Reason})
		}
		return out
	}
	rep.Checked, err = c.Maintain(ctx, pass)
	sort.Slice(rep.Changes, func(i, j int) bool { return rep.Changes[i].ID < rep.Changes[j].ID })
	return rep, err
}

// noteUse records that entries were used now: shown (each at most once
// per session, when there is one) or, when read, opened on purpose. A
// failure only warns.
func (s *core) noteUse(ctx context.Context, c *cache.Cache, ids []string, session string, read bool) {
	if err := c.RecordUse(ctx, cache.Use{IDs: ids, At: s.now(), Session: session, Read: read}); err != nil {
		s.warnf("could not record access statistics: %v", err)
	}
}
