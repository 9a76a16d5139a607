package app

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A time in the query ranks entries of that time first, in lexical and
// hybrid search alike, including an entry that refers to it ("yesterday"
// written the day after); --since overrides the words; AsOf moves "last
// month".
func TestSearchReadsTimeInTheQuery(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	for name, opts := range searchModes() {
		t.Run(name, func(t *testing.T) {
			opts.Now = func() time.Time { return now }
			opts.RawScores = true
			s := openTest(t, opts)
			ents, err := s.Memory().Import(ctx, []SaveRequest{
				{Content: "cache decision: keep the cache in the git dir", Type: memory.TypeDecision, Created: time.Date(2026, 3, 10, 9, 0, 0, 0, time.UTC)},
				{Content: "cache decision: the cache moves to tmpfs on CI", Type: memory.TypeDecision, Created: now.AddDate(0, 0, -4)},
				{Content: "Yesterday we made a cache decision: drop the cache warmup", Type: memory.TypeDecision, Created: time.Date(2026, 8, 15, 9, 0, 0, 0, time.UTC)},
			})
			if err != nil {
				t.Fatal(err)
			}
			march, recent, august := ents[0].ID, ents[1].ID, ents[2].ID
			for _, c := range []struct {
				query, first, time string
			}{
				{"what cache decision did we take in March", march, "2026-03-01 – 2026-03-31"},
				{"the cache decision of 14 August 2026", august, "2026-08-14"},
				{"the cache decision of last week", recent, "2026-11-16 – 2026-11-22"}, // now is a Monday
			} {
				hits, info, err := s.Recall().Search(ctx, SearchRequest{Query: c.query, Filter: Filter{Limit: 3}})
				if err != nil || len(hits) == 0 {
					t.Fatalf("%q: %v %v", c.query, hits, err)
				}
				if hits[0].ID != c.first || !strings.Contains(info.Time, c.time) {
					t.Errorf("%q: first %q (want %q), time %q (want %s)", c.query, hits[0].Content, c.first, info.Time, c.time)
				}
			}
			if _, info, _ := s.Recall().Search(ctx, SearchRequest{Query: "cache decision in March", Filter: Filter{Since: now.AddDate(-1, 0, 0)}}); info.Time != "" {
				t.Errorf("--since did not override the query's time: %q", info.Time)
			}
		})
	}
	s := openTest(t, Options{Model: "no-such-model", Now: func() time.Time { return now }, AsOf: time.Date(2026, 4, 2, 0, 0, 0, 0, time.UTC)})
	if _, info, _ := s.Recall().Search(ctx, SearchRequest{Query: "the cache decision of last month"}); !strings.Contains(info.Time, "2026-03-01 – 2026-03-31") {
		t.Errorf("as of 2 April, last month is %q", info.Time)
	}
}
