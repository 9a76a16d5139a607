package app

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

func TestMaintenanceWithAControlledClock(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s := openTest(t, Options{Now: clock})
	days := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	ents, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: "handoff from last week", Type: memory.TypeHandoff, Created: days(10)},
		{Content: "issue nobody looked at", Type: memory.TypeIssue, Created: days(20)},
		{Content: "decision from last month", Type: memory.TypeDecision, Created: days(30)},
		{Content: "progress note people keep reading", Type: memory.TypeProgress, Created: days(2)},
		{Content: "pinned handoff", Type: memory.TypeHandoff, Created: days(100), Pinned: true},
		{Content: "fresh handoff", Type: memory.TypeHandoff, Created: days(1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	handoff, issue, decision, progress, pinned, fresh := ents[0].ID, ents[1].ID, ents[2].ID, ents[3].ID, ents[4].ID, ents[5].ID
	for i := 0; i < 3; i++ {
		if _, err := s.Recall().Show(ctx, progress); err != nil {
			t.Fatal(err)
		}
	}
	now = now.AddDate(0, 0, 5) // progress is now 7 days old, used 3 times: not promoted, not idle

	dry, err := s.Memory().Maintain(ctx, true)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Change{
		handoff:  {To: memory.TierEphemeral, Archived: true},
		issue:    {To: memory.TierEphemeral},
		decision: {To: memory.TierLongterm},
		fresh:    {To: memory.TierEphemeral, Archived: true}, // 6 days idle, never used
	}
	if len(dry.Changes) != len(want) {
		t.Fatalf("dry run changes: %+v", dry.Changes)
	}
	for _, ch := range dry.Changes {
		w, ok := want[ch.ID]
		if !ok || ch.To != w.To || ch.Archived != w.Archived || ch.Reason == "" {
			t.Errorf("change %+v, want %+v", ch, w)
		}
		if ch.ID == pinned || ch.ID == progress {
			t.Errorf("a pinned entry decayed, or a used progress note was promoted: %+v", ch)
		}
	}
	if rows, _ := s.Recall().List(ctx, Filter{}); len(rows) != 6 {
		t.Fatalf("a dry run changed what is listed: %d rows", len(rows))
	}

	if _, err := s.Memory().Maintain(ctx, false); err != nil {
		t.Fatal(err)
	}
	rows, _ := s.Recall().List(ctx, Filter{})
	if len(rows) != 4 {
		t.Fatalf("after maintenance %d entries listed, want 4", len(rows))
	}
	if hits, _, _ := s.Recall().Search(ctx, SearchRequest{Query: "handoff"}); len(hits) != 1 || hits[0].ID != pinned {
		t.Fatalf("search after decay: %+v", hits)
	}
	arch, _ := s.Recall().List(ctx, Filter{OnlyArchived: true})
	if len(arch) != 2 || !arch[0].Decayed || !arch[0].Archived {
		t.Fatalf("decayed entries: %+v", arch)
	}
	if long, _ := s.Recall().List(ctx, Filter{Tier: memory.TierLongterm}); len(long) != 1 || long[0].ID != decision {
		t.Fatalf("longterm filter: %+v", long)
	}
	// Nothing reached the shared memory: the decay is local.
	st, _ := s.Status(ctx)
	if st.Stats.ByTier["longterm"] != 1 || st.Stats.Archived != 2 {
		t.Fatalf("status after maintenance: %+v", st.Stats)
	}
	// A second pass changes nothing.
	again, _ := s.Memory().Maintain(ctx, false)
	if len(again.Changes) != 0 {
		t.Fatalf("second pass: %+v", again.Changes)
	}
	// An authored change clears the verdict: editing the handoff brings it back.
	text := "handoff, still relevant"
	if _, err := s.Memory().Edit(ctx, handoff, EditRequest{Content: &text}); err != nil {
		t.Fatal(err)
	}
	if rows, _ := s.Recall().List(ctx, Filter{}); len(rows) != 5 {
		t.Fatalf("after the edit %d entries listed, want 5", len(rows))
	}
	if again, _ := s.Memory().Maintain(ctx, false); len(again.Changes) != 0 {
		t.Fatalf("an entry edited just now decayed again: %+v", again.Changes)
	}
}

// Deleting the cache, by reindex or by hand, loses none of what decay
// counts: an issue read 10 days ago stays working 20 days later, where one
// whose uses were forgotten would have dropped; what decay archived stays
// archived after reindex.
func TestReindexKeepsUsageAndDecay(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	ents, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: "issue someone read", Type: memory.TypeIssue, Created: now},
		{Content: "handoff nobody read", Type: memory.TypeHandoff, Created: now},
	})
	if err != nil {
		t.Fatal(err)
	}
	issue, handoff := ents[0].ID, ents[1].ID
	now = now.AddDate(0, 0, 10)
	if _, err := s.Recall().Show(ctx, issue); err != nil {
		t.Fatal(err)
	}
	now = now.AddDate(0, 0, 10) // issue idle 10 days with a use; 20 since saved
	if _, err := s.Memory().Maintain(ctx, false); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Recall().Reindex(ctx, ReindexProgress{}); err != nil || n != 2 {
		t.Fatalf("reindex: %d entries, %v (want the 2 saved, archived or not)", n, err)
	}
	sameVerdicts(t, s, issue, handoff, "after reindex")
	// Deleting the cache by hand: the next command rebuilds it and gives
	// the same verdicts at once (judgeRebuilt), before any session start.
	s.Close()
	if err := os.Remove(filepath.Join(s.Root(), ".git", "synaptic", "cache.db")); err != nil {
		t.Fatal(err)
	}
	s, err = Open(s.Root(), Options{Now: func() time.Time { return now }, Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sameVerdicts(t, s, issue, handoff, "after the cache was deleted")
}

// sameVerdicts checks, when, that of TestReindexKeepsUsageAndDecay's
// entries the issue is listed, working, and the handoff archived by
// decay, and that a maintenance pass would change neither: the verdicts
// came back with the rebuild, from the usage it kept.
func sameVerdicts(t *testing.T, s *Service, issue, handoff, when string) {
	t.Helper()
	ctx := context.Background()
	if rows, _ := s.Recall().List(ctx, Filter{}); len(rows) != 1 || rows[0].ID != issue || rows[0].Tier != memory.TierWorking {
		t.Fatalf("%s: %+v (want only the issue, working)", when, rows)
	}
	if arch, _ := s.Recall().List(ctx, Filter{OnlyArchived: true}); len(arch) != 1 || arch[0].ID != handoff || !arch[0].Decayed {
		t.Fatalf("archived %s: %+v (want the handoff, by decay)", when, arch)
	}
	if rep, _ := s.Memory().Maintain(ctx, true); len(rep.Changes) != 0 {
		t.Fatalf("%s, maintenance would change %+v: usage lost, or verdicts not given", when, rep.Changes)
	}
}

// Session start says what its maintenance pass changed, in the seed's
// words, and says nothing when it changed nothing.
func TestSessionStartReportsMaintenance(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	if _, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: "handoff from last week", Type: memory.TypeHandoff, Created: now.AddDate(0, 0, -10)},
		{Content: "decision from last month", Type: memory.TypeDecision, Created: now.AddDate(0, 0, -30)},
		{Content: "issue nobody looked at", Type: memory.TypeIssue, Created: now.AddDate(0, 0, -20)},
	}); err != nil {
		t.Fatal(err)
	}
	md, err := s.Agent().StartSession(ctx, "", 0)
	if err != nil || !strings.Contains(md, "_Maintenance: 1 archived, 1 promoted, 1 demoted_") {
		t.Fatalf("first session start (%v):\n%s", err, md)
	}
	if md, _ := s.Agent().StartSession(ctx, "", 0); strings.Contains(md, "_Maintenance") {
		t.Errorf("a pass that changed nothing is reported:\n%s", md)
	}
}

// A session start judges only the entries due (new, changed, used, or
// past a threshold of memory.DecayNext), yet leaves memory as a full pass
// would: over 40 days of uses, edits, pins and new entries, a full pass
// after each session start finds nothing left to change, and the session
// starts judge far fewer entries than full passes would. A clock set back
// judges everything again.
func TestSessionStartDecayMatchesAFullPass(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	rng := rand.New(rand.NewSource(7))
	types := []memory.Type{memory.TypeHandoff, memory.TypeIssue, memory.TypeDecision, memory.TypeInsight, memory.TypeProgress, memory.TypeReference}
	var reqs []SaveRequest
	for i := 0; i < 120; i++ {
		reqs = append(reqs, SaveRequest{Content: fmt.Sprintf("entry %d about the billing worker", i), Type: types[i%len(types)],
			Created: now.Add(-time.Duration(rng.Intn(30*24)) * time.Hour)})
	}
	ents, err := s.Memory().Import(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	judged, entries := 0, 0
	for day := 0; day < 40; day++ {
		now = now.Add(time.Duration(20+rng.Intn(8)) * time.Hour)
		for k := 0; k < 3; k++ {
			e := ents[rng.Intn(len(ents))]
			switch rng.Intn(6) {
			case 0:
				text := fmt.Sprintf("edited on day %d", day)
				_, err = s.Memory().Edit(ctx, e.ID, EditRequest{Content: &text})
			case 1:
				_, err = s.Memory().SetPinned(ctx, e.ID, rng.Intn(2) == 0)
			case 2:
				var saved []memory.Entry
				saved, err = s.Memory().Import(ctx, []SaveRequest{{Content: fmt.Sprintf("new on day %d", day), Type: types[rng.Intn(len(types))], Created: now}})
				ents = append(ents, saved...)
			default:
				_, err = s.Recall().Show(ctx, e.ID)
			}
			if err != nil && !strings.Contains(err.Error(), "archived") {
				t.Fatal(err)
			}
		}
		rep, err := s.maintainDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		judged += rep.Checked
		full, err := s.Memory().Maintain(ctx, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(full.Changes) != 0 {
			t.Fatalf("day %d: a full pass would still change %+v", day, full.Changes)
		}
		entries += full.Checked
	}
	if judged*3 > entries {
		t.Fatalf("session starts judged %d entries where full passes would judge %d", judged, entries)
	}
	now = now.AddDate(0, 0, -20)
	rep, err := s.maintainDue(ctx)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := s.Memory().Maintain(ctx, true)
	if rep.Checked != full.Checked || len(full.Changes) != 0 {
		t.Fatalf("clock set back: judged %d of %d, a full pass would change %+v", rep.Checked, full.Checked, full.Changes)
	}
}
