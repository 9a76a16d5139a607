package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/memory"
)

// TestTopBM25RanksExactlyAsBM25 compares top_bm25's pruned top-k with
// FTS5's own bm25() over the same rows: same rows, same order, same scores
// to the bit, whatever k, for common and rare words, words in tags (other
// column weight), repeated words and two query words with one stem.
func TestTopBM25RanksExactlyAsBM25(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields(`deploy deploying deployed postgres redis timeout flaky pipeline cache latency
		retry billing auth token session login bug helm kubernetes migration rollback index vacuum
		queue worker embed model vector search ranking schema lock commit merge rebase hook`)
	var entries []memory.Entry
	for i := range 3000 {
		n := 3 + rng.IntN(40)
		words := make([]string, n)
		for j := range words {
			// Zipf-like: low indexes are common
			words[j] = vocab[min(len(vocab)-1, int(rng.ExpFloat64()*8))]
		}
		var tags []string
		if i%3 == 0 {
			tags = []string{vocab[rng.IntN(len(vocab))]}
		}
		entries = append(entries, mk(memory.TypeInsight, strings.Join(words, " "), 0, tags...))
	}
	put(t, c, entries)

	rank := func(fn, q string, k int) (ids []int64, scores []float64) {
		rows, err := c.db.QueryContext(ctx, `SELECT rowid, `+fn+` AS rank FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?`, q, k)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var id int64
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			ids, scores = append(ids, id), append(scores, s)
		}
		return ids, scores
	}
	pruned := 0
	for _, text := range []string{"deploy", "deploy deploying", "postgres redis timeout flaky", "hook rebase", "kubernetes", "vacuum queue deploy deploy", "nothingmatches", "deploy nothingmatches"} {
		q, err := MatchQuery(text)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []int{1, 10, 200, 5000, 1 << 20} {
			wantIDs, want := rank("bm25(fts, 1.0, 0.5)", q, k)
			gotIDs, got := rank(fmt.Sprintf("top_bm25(fts, %d, NULL, 1.0, 0.5)", k), q, k)
			if fmt.Sprint(gotIDs) != fmt.Sprint(wantIDs) || fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("%q k=%d:\n top_bm25 %v %v\n bm25     %v %v", text, k, gotIDs, got, wantIDs, want)
			}
			// rows past the k best are the pruned ones: 0.0, never a real score
			var zero int
			if err := c.db.QueryRowContext(ctx, fmt.Sprintf(`SELECT count(*) FROM (SELECT top_bm25(fts, %d, NULL, 1.0, 0.5) AS r FROM fts WHERE fts MATCH ?) WHERE r = 0`, k), q).Scan(&zero); err != nil {
				t.Fatal(err)
			}
			pruned += zero
		}
	}
	if pruned == 0 {
		t.Fatal("top_bm25 never skipped a row: the pruning is not working")
	}

	// With an admission set, the k best of the admitted rows: what bm25()
	// ranks among them, rows past the set's end and below 0 rejected.
	admit := make([]byte, 3000/7/8)
	for id := 0; id < 8*len(admit); id += 7 {
		admit[id/8] |= 1 << (id % 8)
	}
	scored := func(query string, args ...any) string {
		rows, err := c.db.QueryContext(ctx, query, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []string
		for rows.Next() {
			var id int64
			var s float64
			if err := rows.Scan(&id, &s); err != nil {
				t.Fatal(err)
			}
			if s < 0 { // scored; rows rejected or pruned are 0.0
				out = append(out, fmt.Sprint(id, " ", s))
			}
		}
		return strings.Join(out, ", ")
	}
	for _, text := range []string{"deploy", "postgres redis timeout flaky", "hook rebase"} {
		q, _ := MatchQuery(text)
		for _, k := range []int{1, 10, 200} {
			want := scored(`SELECT rowid, bm25(fts, 1.0, 0.5) AS rank FROM fts WHERE fts MATCH ? AND rowid % 7 = 0 AND rowid < ? ORDER BY rank, rowid LIMIT ?`, q, 8*len(admit), k)
			got := scored(fmt.Sprintf(`SELECT rowid, top_bm25(fts, %d, ?, 1.0, 0.5) AS rank FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?`, k), admit, q, k)
			if got != want || want == "" {
				t.Fatalf("%q k=%d with an admission set:\n top_bm25 %s\n bm25     %s", text, k, got, want)
			}
		}
	}
}
