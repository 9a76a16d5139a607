package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// A search whose filter admits few of the matches (commits among much
// memory that matches better) returns the best of those few, as scoring
// every match and filtering would: through a pass in which top_bm25
// scores only the rows the filter admits, whether the commits rank among
// the first few hundred matches or below them.
func TestSearchFindsTheBestOfFewAdmitted(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []memory.Entry
	for i := range 100 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("retry backoff %d", i), time.Duration(i)*time.Minute))
	}
	for i := range 25 {
		filler := strings.Repeat(" and more", i%9)
		entries = append(entries, mk(memory.TypeGitCommit, fmt.Sprintf("commit %d adds a retry backoff%s", i, filler), time.Duration(i)*time.Hour))
	}
	for i := range 300 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("a retry %d in a long note about something else entirely, words words words", i), time.Duration(i)*time.Second))
	}
	put(t, c, entries)
	for lim := 1; lim <= 12; lim++ {
		commits := Filter{Types: []memory.Type{memory.TypeGitCommit}, Limit: lim}
		mq, _ := MatchQuery("retry backoff")
		w, args := commits.where()
		want, err := c.strings(ctx, `SELECT e.id FROM fts JOIN entries e ON e.rowid = fts.rowid WHERE fts MATCH ? AND `+w+`
			ORDER BY bm25(fts, 1.0, 0.5), e.created DESC, e.id LIMIT ?`, append(append([]any{mq}, args...), lim)...)
		if err != nil {
			t.Fatal(err)
		}
		hits, err := c.Search(ctx, "retry backoff", commits)
		if err != nil || len(want) != lim {
			t.Fatalf("%v, %d expected", err, len(want))
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.ID)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d:\n got %v\nwant %v", lim, got, want)
		}
	}
	// a query whose matches all fit the first window (25 commits, none an
	// insight) is answered by it, and does not mark its filter as one that
	// admits few
	insights := Filter{Types: []memory.Type{memory.TypeInsight}, Limit: 10}
	if hits, err := c.Search(ctx, "commit", insights); err != nil || len(hits) != 0 {
		t.Fatalf("%v %v", hits, err)
	}
	if hits, err := c.Search(ctx, "entirely", insights); err != nil || len(hits) != 10 {
		t.Fatalf("%d hits, %v", len(hits), err)
	}
	if len(c.fewer) != 1 {
		t.Fatalf("filters marked as admitting few: %v", c.fewer)
	}
	// what makes a filter one that admits few: its share of the rows
	for _, tc := range []struct {
		f         Filter
		low, high float64
	}{{Filter{Types: []memory.Type{memory.TypeGitCommit}}, 0.05, 0.07}, {insights, 0.9, 0.95}} {
		w, args := tc.f.admitting()
		if _, share, err := c.admittedBits(ctx, w, args); err != nil || share < tc.low || share > tc.high {
			t.Fatalf("%v admits a share of %.3f (%v), want %.2f-%.2f", tc.f.Types, share, err, tc.low, tc.high)
		}
	}
}

// A list of several types is the newest entries of all of them, in one
// order (created, then id on a tie), whatever the filter beside the types,
// as one sort of every admitted entry gives it.
func TestListOfSeveralTypesIsTheNewestOfAll(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	types := []memory.Type{memory.TypeDecision, memory.TypeInsight, memory.TypeIssue}
	base := time.Now().Add(-time.Hour).UTC().Truncate(time.Second)
	var entries []memory.Entry
	for i := range 60 {
		e := mk(types[i%3], fmt.Sprintf("entry %d", i), 0)
		e.Created = base.Add(-time.Duration(i/4) * time.Minute) // ties by fours, across types
		if i%7 == 0 {
			e.Tags = []string{"seven"}
		}
		entries = append(entries, e)
	}
	put(t, c, entries)
	at := time.Now().UTC()
	put(t, c, nil, memory.Op{V: 1, ID: memory.NewID(), Entry: entries[1].ID, Kind: memory.OpArchive, Clock: 1, At: at})
	for _, f := range []Filter{
		{Types: types[:2]},
		{Types: []memory.Type{memory.TypeIssue, memory.TypeDecision}},
		{Types: types, Tags: []string{"seven"}},
		{Types: types, IncludeArchived: true},
	} {
		all, err := c.List(ctx, f) // no limit: one sort of all
		if err != nil || len(all) < 5 {
			t.Fatalf("%+v: %d rows, %v", f, len(all), err)
		}
		for _, lim := range []int{1, 3, 5, len(all), len(all) + 4} {
			f.Limit = lim
			got, err := c.List(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			want := all[:min(lim, len(all))]
			if !slices.EqualFunc(got, want, func(a, b Row) bool { return a.ID == b.ID }) {
				t.Fatalf("%v tags %v limit %d:\n got %v\nwant %v", f.Types, f.Tags, lim, contents(got), contents(want))
			}
			// a page further on (VectorRows pages so)
			for _, off := range []int{1, 4} {
				ids, args := newest("entries e", f, lim, off)
				page, err := c.strings(ctx, `SELECT e.content FROM entries e JOIN (`+ids+`) n ON n.id = e.rowid ORDER BY e.created DESC, e.id`, args...)
				if err != nil {
					t.Fatal(err)
				}
				if want := contents(all[min(off, len(all)):min(off+lim, len(all))]); !slices.Equal(page, want) {
					t.Fatalf("%v limit %d offset %d:\n got %v\nwant %v", f.Types, lim, off, page, want)
				}
			}
		}
	}
	// ListBriefs of a window reads it in one pass and finds what List does
	for _, f := range []Filter{
		{Types: types[:2], Since: base.Add(-5 * time.Minute)},
		{Types: types, Since: base.Add(-3 * time.Minute), IncludeArchived: true},
		{Types: []memory.Type{memory.TypeIssue}, Since: base.Add(-9 * time.Minute)},
	} {
		for _, lim := range []int{1, 3, 5, 100} {
			f.Limit = lim
			rows, err := c.List(ctx, f)
			if err != nil || len(rows) == 0 {
				t.Fatalf("%+v: %d rows, %v", f, len(rows), err)
			}
			briefs, err := c.ListBriefs(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.EqualFunc(briefs, rows, func(b Brief, r Row) bool { return b.ID == r.ID && b.Type == r.Type }) {
				t.Fatalf("%v since %v limit %d: briefs %v, list %v", f.Types, f.Since, lim, briefs, contents(rows))
			}
		}
	}
}

func contents(rows []Row) []string {
	var out []string
	for _, r := range rows {
		out = append(out, r.Content)
	}
	return out
}

// UnjudgedAnchors names each anchor once, leaves out those judged for the
// HEAD asked about, and those only a subscription's memory carries.
func TestUnjudgedAnchorsOnceEachWithoutForeignOrJudged(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	anchored := func(anchor, content string) memory.Entry {
		e := mk(memory.TypeInsight, content, 0)
		e.Anchor = anchor
		return e
	}
	put(t, c, []memory.Entry{anchored("aaa", "local one"), anchored("aaa", "local two"), anchored("ccc", "mixed, local"), anchored("ddd", "judged")})
	putFrom(t, c, "refs/synaptic-sub/org/memory", anchored("bbb", "foreign only"), anchored("ccc", "mixed, foreign"))
	if err := c.JudgeLine(ctx, "head", []string{"ddd"}, nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	for foreign, want := range map[string][]string{"": {"aaa", "bbb", "ccc"}, "refs/synaptic-sub/": {"aaa", "ccc"}} {
		got, err := c.UnjudgedAnchors(ctx, "head", foreign)
		slices.Sort(got)
		if err != nil || !slices.Equal(got, want) {
			t.Fatalf("foreign %q: %v %v, want %v", foreign, got, err, want)
		}
	}
	if got, _ := c.UnjudgedAnchors(ctx, "other", ""); len(got) != 4 {
		t.Fatalf("another HEAD has judged nothing: %v", got)
	}
}

func putFrom(t *testing.T, c *Cache, source string, entries ...memory.Entry) {
	t.Helper()
	tx, err := c.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for _, e := range entries {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, source, false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
}
