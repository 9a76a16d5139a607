package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Patterns, consolidation, rules and near-duplicates, with the word
// embedder standing in for the model (the end-to-end suite runs the model).
func TestPatternsConsolidationAndRules(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }, Embedder: wordEmbedder{}})
	days := func(d int) time.Time { return now.AddDate(0, 0, -d) }
	ents, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: "TestSync times out on CI under load", Type: memory.TypeIssue, Created: days(5)},
		{Content: "TestSync timed out again on the CI runner", Type: memory.TypeIssue, Created: days(3)},
		{Content: "TestSync times out on CI under heavy load", Type: memory.TypeIssue, Created: days(1)},
		{Content: "TestSync times out on CI under load once more", Type: memory.TypeIssue, Created: days(45)}, // too old
		{Content: "the billing page shows the wrong currency", Type: memory.TypeIssue, Created: days(2)},
		{Content: "always run go vet before committing", Type: memory.TypeRule, Created: days(10)},
		{Content: "stop running go vet before committing, it is too slow", Type: memory.TypeInsight, Tags: []string{TagCorrection}, Created: days(1)},
		{Content: "Never push directly to the main branch.", Type: memory.TypeInsight, Created: days(1)},
		{Content: "we looked at the logs", Type: memory.TypeInsight, Created: days(1)},
	})
	if err != nil {
		t.Fatal(err)
	}

	patterns, err := s.Memory().Patterns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(patterns) != 1 || len(patterns[0].Entries) != 3 || patterns[0].ID != ents[0].ID || !patterns[0].Since.Equal(days(5)) {
		t.Fatalf("patterns: %+v", patterns)
	}
	if label := PatternLabel(patterns[0]); !strings.HasPrefix(label, "[Pattern: seen 3 times since 2026-05-27") {
		t.Errorf("label %q", label)
	}
	hits, _, err := s.Recall().Search(ctx, SearchRequest{Query: "TestSync", Filter: Filter{Types: []memory.Type{memory.TypeIssue}, Limit: 10}})
	if err != nil {
		t.Fatal(err)
	}
	labelled := 0
	for _, h := range hits {
		if h.Pattern != "" {
			labelled++
		}
	}
	if labelled != 3 {
		t.Errorf("%d search hits carry the pattern label, want 3: %+v", labelled, hits)
	}
	groups, err := s.Memory().Consolidation(ctx)
	if err != nil || len(groups) != 1 || len(groups[0].Entries) != 3 {
		t.Fatalf("consolidation: %+v %v", groups, err)
	}

	md, err := s.Agent().StartSession(ctx, "", 8000)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Recurring issues", "[Pattern: seen 3 times", "## Consolidation candidates", "## Pending rules", "CONFLICT with rule " + ShortID(ents[5].ID), "Never push directly"} {
		if !strings.Contains(md, want) {
			t.Errorf("session context lacks %q:\n%s", want, md)
		}
	}

	pending, err := s.Agent().PendingRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 2 {
		t.Fatalf("pending rules: %+v", pending)
	}
	for _, p := range pending {
		if p.ID == ents[6].ID && (len(p.Conflicts) != 1 || p.Conflicts[0].ID != ents[5].ID) {
			t.Errorf("the correction should conflict with the vet rule: %+v", p.Conflicts)
		}
	}
	rule, err := s.Agent().AcceptRule(ctx, ents[7].ID, "")
	if err != nil || rule.Type != memory.TypeRule || len(rule.RelatedIDs) != 1 || rule.RelatedIDs[0] != ents[7].ID {
		t.Fatalf("accept: %+v %v", rule, err)
	}
	if _, err := s.Agent().DismissRule(ctx, ents[6].ID); err != nil {
		t.Fatal(err)
	}
	if pending, _ := s.Agent().PendingRules(ctx); len(pending) != 0 {
		t.Fatalf("still pending: %+v", pending)
	}

	// resolved patterns stop surfacing; a month later the issues age out
	if _, err := s.Memory().ResolvePattern(ctx, ents[2].ID[:8]); err != nil {
		t.Fatal(err)
	}
	if patterns, _ := s.Memory().Patterns(ctx); len(patterns) != 0 {
		t.Fatalf("resolved pattern still listed: %+v", patterns)
	}
	if _, err := s.Memory().ResolvePattern(ctx, ents[4].ID); err == nil {
		t.Fatal("an issue outside any pattern resolved")
	}

	// near-duplicates: by words without the model, by meaning with it
	dups, err := s.Recall().NearDuplicates(ctx, "TestSync times out on CI under load", ByWords)
	if err != nil || len(dups) == 0 || dups[0].How != "lexical" {
		t.Fatalf("lexical near-duplicates: %+v %v", dups, err)
	}
	dups, err = s.Recall().NearDuplicates(ctx, "TestSync times out on the CI under load", ByMeaning)
	if err != nil || len(dups) == 0 || dups[0].How != "vector" || dups[0].Similarity < duplicateCosine {
		t.Fatalf("vector near-duplicates: %+v %v", dups, err)
	}
	if dups, _ := s.Recall().NearDuplicates(ctx, "lunch is at noon on fridays", ByMeaning); len(dups) != 0 {
		t.Fatalf("unrelated text has near-duplicates: %+v", dups)
	}
}

// A rule saved with the correction it accepts (context_save_rule's
// correction_id) takes the correction off the pending list and is never
// reported as conflicting with it; a rule saved with a correction's very
// words is not its conflict either.
func TestRuleFromCorrectionLeavesPending(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{Embedder: wordEmbedder{}})
	corr, err := s.Memory().Save(ctx, SaveRequest{Content: "From now on, use pnpm instead of npm", Tags: []string{TagCorrection}})
	if err != nil {
		t.Fatal(err)
	}
	other, _ := s.Memory().Save(ctx, SaveRequest{Content: "never squash merge release branches", Tags: []string{TagCorrection}})
	if _, err := s.Agent().SaveRule(ctx, RuleRequest{Label: "release", Content: "never squash merge release branches"}); err != nil {
		t.Fatal(err)
	}
	rule, err := s.Agent().SaveRule(ctx, RuleRequest{Label: "use-pnpm", Content: "use pnpm instead of npm", Correction: corr.ID[:8]})
	if err != nil {
		t.Fatal(err)
	}
	if rule.Label != "use-pnpm" || len(rule.RelatedIDs) != 1 || rule.RelatedIDs[0] != corr.ID {
		t.Fatalf("rule: %+v", rule)
	}
	pending, err := s.Agent().PendingRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != 1 || pending[0].ID != other.ID {
		t.Fatalf("pending: %+v", pending)
	}
	if len(pending[0].Conflicts) != 0 {
		t.Errorf("a correction conflicts with the rule of its own words: %+v", pending[0].Conflicts)
	}
	if _, err := s.Agent().SaveRule(ctx, RuleRequest{Content: "x", Correction: "ffffffff"}); err == nil {
		t.Error("a rule accepting an unknown correction was saved")
	}
}

// Saving an issue that joins a recurring pattern says so (context_save's
// pattern_detected) and makes the pattern's issues longterm; an unrelated
// issue joins none.
func TestSaveReportsTheJoinedPattern(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{Embedder: wordEmbedder{}})
	for _, c := range []string{"TestSync times out on CI under load", "TestSync timed out again on the CI runner"} {
		if _, err := s.Memory().Save(ctx, SaveRequest{Content: c, Type: memory.TypeIssue}); err != nil {
			t.Fatal(err)
		}
	}
	third, err := s.Memory().SaveLinked(ctx, SaveRequest{Content: "TestSync times out on CI under heavy load", Type: memory.TypeIssue}, ByMeaning)
	if err != nil {
		t.Fatal(err)
	}
	if third.Pattern == nil || len(third.Pattern.Entries) != 3 {
		t.Fatalf("the third alike issue formed no pattern: %+v", third.Pattern)
	}
	// Its issues are kept: longterm, by an authored tier.
	if third.Entry.Tier != memory.TierLongterm {
		t.Errorf("the reply says tier %q", third.Entry.Tier)
	}
	long, _ := s.Recall().List(ctx, Filter{Types: []memory.Type{memory.TypeIssue}, Tier: memory.TierLongterm})
	if len(long) != 3 || !long[0].TierExplicit {
		t.Errorf("longterm issues after the pattern formed: %+v", long)
	}
	// in one commit, however many issues the pattern holds
	var tiers []string
	for _, subject := range strings.Split(testrepo.Git(t, s.Root(), "log", "--format=%s", "refs/synaptic/memory"), "\n") {
		if strings.HasPrefix(subject, "tier ") {
			tiers = append(tiers, subject)
		}
	}
	if len(tiers) != 1 || tiers[0] != "tier 3 entries" {
		t.Errorf("the pattern's tiers were written as %q", tiers)
	}
	other, err := s.Memory().SaveLinked(ctx, SaveRequest{Content: "the billing page shows the wrong currency", Type: memory.TypeIssue}, ByMeaning)
	if err != nil || other.Pattern != nil {
		t.Fatalf("an unrelated issue joined a pattern: %+v %v", other.Pattern, err)
	}
	// status counts the pattern from the stored vectors, with no model.
	bare, err := Open(s.Root(), Options{Model: "no-such-model", Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Close()
	st, err := bare.Status(ctx)
	if err != nil || st.ActivePatterns == nil || *st.ActivePatterns != 1 || bare.model.loaded() != nil {
		t.Fatalf("status: %v patterns, %v (embedder %v)", st.ActivePatterns, err, bare.model.loaded())
	}
}

// countingEmbedder is wordEmbedder that records every text it embeds.
type countingEmbedder struct {
	wordEmbedder
	texts *[]string
}

func (e countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	*e.texts = append(*e.texts, texts...)
	return e.wordEmbedder.Embed(ctx, texts)
}

// A save that looked for near-duplicates by meaning keeps the vector it
// computed as the new entry's: the next search embeds its query and
// nothing else, and finds the entry by meaning.
func TestSaveByMeaningEmbedsTheEntryOnce(t *testing.T) {
	ctx := context.Background()
	var embedded []string
	s := openTest(t, Options{Embedder: countingEmbedder{texts: &embedded}})
	const content = "the resize hook fires twice when a client detaches during copy mode"
	saved, err := s.Memory().SaveLinked(ctx, SaveRequest{Content: content, Type: memory.TypeInsight}, ByMeaning)
	if err != nil {
		t.Fatal(err)
	}
	embedded = nil
	found, _, err := s.Recall().Search(ctx, SearchRequest{Query: "client detach resize hook"})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(embedded, content) || len(embedded) != 1 {
		t.Errorf("the search after the save embedded %q; want only its query", embedded)
	}
	hits := Hits(found)
	if len(hits) == 0 || hits[0].ID != saved.Entry.ID || hits[0].Cosine <= 0 {
		t.Fatalf("the saved entry is not found by meaning: %+v", hits)
	}
	st, err := s.Recall().VectorStatus(ctx)
	if err != nil || st.Embedded != st.Entries {
		t.Errorf("entries without a vector after the search: %+v %v", st, err)
	}
}

// Many entries waiting for vectors the store holds (a reindex killed as
// it restored them leaves the rebuilt cache so) are taken back in one
// pass by the next search, which says so: none is embedded again.
func TestManyWaitingEntriesTakeTheirStoredVectorsBack(t *testing.T) {
	defer func(n int) { restoreAtOnce = n }(restoreAtOnce)
	restoreAtOnce = 3
	ctx := context.Background()
	var embedded []string
	var warn bytes.Buffer
	s := openTest(t, Options{Embedder: countingEmbedder{texts: &embedded}, Warn: &warn})
	var reqs []SaveRequest
	for i := range 5 {
		reqs = append(reqs, SaveRequest{Content: fmt.Sprintf("the pane resize hook fired %d times", i), Type: memory.TypeInsight})
	}
	if _, err := s.Memory().Import(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Recall().Search(ctx, SearchRequest{Query: "pane resize"}); err != nil || len(embedded) != 6 {
		t.Fatalf("first search: %v, embedded %d texts (want the 5 entries and the query)", err, len(embedded))
	}
	if err := s.conn.remove(); err != nil { // the vector store stays
		t.Fatal(err)
	}
	embedded, warn = nil, bytes.Buffer{}
	hits, _, err := s.Recall().Search(ctx, SearchRequest{Query: "resize hook"})
	if err != nil || len(hits) != 5 {
		t.Fatalf("search after the cache went: %d hits, %v", len(hits), err)
	}
	if len(embedded) != 1 || !strings.Contains(warn.String(), "took back 5 stored vectors") {
		t.Fatalf("embedded %q; said %q; want the query alone, and the 5 taken back", embedded, warn.String())
	}
}

// A save's near-duplicate search runs meanwhile (the entry's directory
// read ahead) once, whichever way it looks: by words, with the SQL beside
// it; by meaning; and by meaning falling back to words without a model.
func TestNearDuplicatesRunMeanwhileOnce(t *testing.T) {
	ctx := context.Background()
	for name, opts := range searchModes() {
		s := openTest(t, opts)
		if _, err := s.Memory().Import(ctx, []SaveRequest{{Content: "TestSync times out on CI under load", Type: memory.TypeIssue}}); err != nil {
			t.Fatal(err)
		}
		for _, by := range []Likeness{ByWords, ByMeaning} {
			calls := 0
			dups, _, err := s.Recall().nearDuplicates(ctx, "TestSync times out on the CI under load", by, func() { calls++ })
			if err != nil || len(dups) != 1 || calls != 1 {
				t.Errorf("%s, by %d: %d near-duplicates, %v, meanwhile ran %d times; want 1, once", name, by, len(dups), err, calls)
			}
		}
	}
}
