package cache

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/notes"
)

// A search whose filter admits few of the matches (commits among much
// memory that matches better) returns the best of those few, as scoring
// every match and filtering would: through a wider window where the
// commits rank among the first few hundred, through every match where
// they rank below those.
func TestSearchFindsTheBestOfFewAdmitted(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	var entries []notes.Entry
	for i := range 100 {
		entries = append(entries, mk(notes.TypeInsight, fmt.Sprintf("retry backoff %d", i), time.Duration(i)*time.Minute))
	}
	for i := range 25 {
		filler := strings.Repeat(" and more", i%9)
		entries = append(entries, mk(notes.TypeGitCommit, fmt.Sprintf("commit %d adds a retry backoff%s", i, filler), time.Duration(i)*time.Hour))
	}
	for i := range 300 {
		entries = append(entries, mk(notes.TypeInsight, fmt.Sprintf("a retry %d in a long note about something else entirely, words words words", i), time.Duration(i)*time.Second))
	}
	put(t, c, entries)
	for lim := 1; lim <= 12; lim++ {
		commits := Filter{Types: []notes.Type{notes.TypeGitCommit}, Limit: lim}
		mq, _ := MatchQuery("retry backoff")
		w, args := commits.where()
		rows, err := c.db.QueryContext(ctx, `SELECT e.id FROM fts JOIN entries e ON e.rowid = fts.rowid WHERE fts MATCH ? AND `+w+`
			ORDER BY bm25(fts, 1.0, 0.5), e.created DESC, e.id LIMIT ?`, append(append([]any{mq}, args...), lim)...)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for rows.Next() {
			var id string
			rows.Scan(&id)
			want = append(want, id)
		}
		rows.Close()
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
}
