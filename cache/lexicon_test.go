package cache

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// waitLexicon waits until the cache's lexicon has been read.
func waitLexicon(t *testing.T, c *Cache) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if !c.WaitLexicon(ctx) {
		t.Fatal("the lexicon was not read within a minute")
	}
}

// heldIndex is the lexicon c holds now, read under its lock (a read in
// the background may be setting it); nil when none.
func heldIndex(c *Cache) *lexIndex {
	h := c.lex
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ix
}

// sameSearch runs each query through FTS5 (no lexicon) and through the
// lexicon, and fails unless both return the same entries in the same
// order with the same BM25, to the bit. It returns how many searches the
// lexicon ranked.
func sameSearch(t *testing.T, c *Cache, queries []string, filters []Filter) int {
	t.Helper()
	ctx := context.Background()
	held := 0
	for _, f := range filters {
		for _, q := range queries {
			h := c.lex
			c.lex = nil
			want, werr := c.Search(ctx, q, f)
			c.lex = h
			before := heldIndex(c)
			got, gerr := c.Search(ctx, q, f)
			if fmt.Sprint(werr) != fmt.Sprint(gerr) {
				t.Fatalf("%q %+v: FTS5 says %v, the lexicon %v", q, f, werr, gerr)
			}
			line := func(hs []Hit) string {
				var s []string
				for _, h := range hs {
					s = append(s, fmt.Sprintf("%s %v", h.ID, h.BM25))
				}
				return strings.Join(s, "\n")
			}
			if line(got) != line(want) {
				t.Fatalf("%q %+v:\nlexicon:\n%s\nFTS5:\n%s", q, f, line(got), line(want))
			}
			// the same lexicon before and after: it ranked (a read
			// started by this search may end in the background meanwhile)
			if ix := heldIndex(c); ix != nil && ix == before {
				held++
			}
		}
	}
	return held
}

// TestLexiconRanksAsFTS5 compares Search ranked by the lexicon a
// long-lived process holds with Search ranked by FTS5: the same entries,
// order and BM25 to the bit, for common and rare words, stems, words in
// tags, words FTS5 reads as phrases (snake_case), filters that admit few
// rows, and after entries are added, edited, deleted and the cache reset.
func TestLexiconRanksAsFTS5(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	defer func(n int64, parts func() int64) { lexMinPart, lexParts = n, parts }(lexMinPart, lexParts)
	lexMinPart, lexParts = 300, func() int64 { return 3 } // read in parts, as on a larger machine
	defer func(n, from int) { lexWindow, lexWindowFrom = n, from }(lexWindow, lexWindowFrom)
	lexWindow, lexWindowFrom = 64, 0 // walked in many windows, as a large index is
	rng := rand.New(rand.NewPCG(3, 4))
	vocab := strings.Fields(`deploy deploying deployed postgres redis timeout flaky pipeline cache latency
		retry billing auth token session login bug helm kubernetes migration rollback index vacuum
		queue worker embed model vector search ranking schema lock commit merge rebase hook
		server_client tty_write Ünïcödé naïve café`)
	types := []memory.Type{memory.TypeInsight, memory.TypeDecision, memory.TypeIssue, memory.TypeGitCommit}
	text := func() string {
		words := make([]string, 1+rng.IntN(30))
		for j := range words {
			words[j] = vocab[min(len(vocab)-1, int(rng.ExpFloat64()*9))]
			if rng.IntN(40) == 0 { // the two words of a snake_case one, apart
				words[j] = "server client"
			}
		}
		return strings.Join(words, " ")
	}
	entry := func(i int) memory.Entry {
		var tags []string
		if i%4 == 0 {
			tags = []string{vocab[rng.IntN(len(vocab))], "tty_write"}
		}
		e := mk(types[rng.IntN(len(types))], text(), time.Duration(rng.IntN(1000))*time.Hour, tags...)
		if i%97 == 0 {
			e.Content = strings.Repeat("deploy ", 70000) // past a posting's 16 bits
		}
		return e
	}
	var entries []memory.Entry
	for i := range 2000 {
		entries = append(entries, entry(i))
	}
	put(t, c, entries)
	c.HoldLexicon()
	waitLexicon(t, c)

	queries := []string{"deploy", "deploying deployed", "postgres redis timeout flaky", "hook rebase", "kubernetes",
		"vacuum queue deploy deploy", "nothingmatches", "deploy nothingmatches", "server_client tty_write", "tty_write",
		"cafe naive unicode", "Ünïcödé", "why does the deploy pipeline time out on postgres?", "the and of"}
	filters := []Filter{{Limit: 1}, {Limit: 10}, {Limit: 50}, {Limit: 600},
		{Limit: 10, Types: []memory.Type{memory.TypeGitCommit}}, {Limit: 10, Types: []memory.Type{memory.TypeDecision, memory.TypeIssue}},
		{Limit: 5, Since: time.Now().Add(-100 * time.Hour)}, {Limit: 10, Types: []memory.Type{memory.TypeGitCommit}, Since: time.Now().Add(-30 * time.Hour)}}
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	// a filter's rows scored one by one wherever it names them, rather
	// than found by walking the postings (lexSparse)
	defer func(n int) { lexSparse = n }(lexSparse)
	sparse := lexSparse
	lexSparse = math.MaxInt32
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("scoring the admitted rows, the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	lexSparse = sparse
	// the postings walked in parts at once, as in a large index
	defer func(parts func(int) int) { lexWalkParts = parts }(lexWalkParts)
	lexWalkParts = func(int) int { return 3 }
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("walking in parts, the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	lexWalkParts = func(int) int { return 1 }

	// entries added, edited (text and tags), unchanged but written again,
	// and deleted: the lexicon follows lex_log
	tx, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		e := entries[rng.IntN(len(entries))]
		switch i % 3 {
		case 0:
			e.Content = text()
		case 1:
			e.Tags = append(e.Tags, "rollback")
		}
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 100 {
		if err := tx.DeleteEntry(entries[i*7].ID); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		e := entry(i)
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("after changes, the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	if heldIndex(c).nDead == 0 {
		t.Fatal("the lexicon followed the changes without marking an old document dead")
	}
	lexSparse = math.MaxInt32 // rows written again: later documents than rows after them
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("after changes, scoring the admitted rows, the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	topsAgree(t, heldIndex(c), queries, rng)
	lexSparse = sparse

	// rows of equal score, half of them written later (later documents,
	// earlier rowids): the window takes the earliest rowids, as FTS5 does
	var ties []memory.Entry
	for i := range 10 {
		text := "quokka"
		if i < 5 {
			text = "numbat"
		}
		ties = append(ties, mk(memory.TypeInsight, text, time.Duration(i)*time.Hour))
	}
	put(t, c, ties)
	sameSearch(t, c, []string{"quokka"}, []Filter{{Limit: 1}}) // the lexicon follows the ten
	for i := range ties[:5] {
		ties[i].Content = "quokka"
	}
	put(t, c, ties[:5])
	if n := sameSearch(t, c, []string{"quokka"}, []Filter{{Limit: 1}, {Limit: 2}}); n != 2 {
		t.Fatalf("the lexicon ranked %d of 2 searches of rows of equal score", n)
	}

	// a reset (reindex) logs that everything changed: FTS5 ranks until
	// the lexicon has been read again
	tx, err = c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Reset(); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries[:500] {
		doc, _ := memory.EncodeEntry(e)
		if err := tx.PutEntry(e, "refs/synaptic/memory", false, doc); err != nil {
			t.Fatal(err)
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	sameSearch(t, c, queries[:3], filters[:1])
	waitLexicon(t, c)
	if n := sameSearch(t, c, queries, filters); n != len(queries)*len(filters) {
		t.Fatalf("after a reset, the lexicon ranked %d of %d searches", n, len(queries)*len(filters))
	}
	var triggers int
	if err := c.db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'entries_lex_%'`).Scan(&triggers); err != nil || triggers != len(lexTriggerNames) {
		t.Fatalf("lex_log's triggers after a reset: %d (%v), want %d", triggers, err, len(lexTriggerNames))
	}
}

// topsAgree ranks each query's rows among random sets of rows of every
// size (and all rows) every way: each admitted row scored (lexSparse past
// any set), the postings walked (lexSparse 0) a document at a time, in
// one window or in many (lexWindow) with bounds of blocks of postings
// large or small (lexBlock), and walked in two or three parts at
// once (lexWalkParts), which must keep the same rows with the same
// scores, to the bit.
func topsAgree(t *testing.T, ix *lexIndex, queries []string, rng *rand.Rand) {
	t.Helper()
	defer func(parts func(int) int) { lexWalkParts = parts }(lexWalkParts)
	defer func(n, from, b int) { lexWindow, lexWindowFrom, lexBlock = n, from, b }(lexWindow, lexWindowFrom, lexBlock)
	for _, q := range queries {
		words, err := queryWords(q)
		if err != nil {
			t.Fatal(err)
		}
		phrases := make([]*lexPostings, len(words))
		for i, w := range words {
			if id, ok := ix.terms[w]; ok {
				phrases[i] = &ix.lists[id]
			}
		}
		for _, share := range []int{1, 10, 50, 100, 0} {
			var admit []byte // share 0: nil, every row
			if share > 0 {
				admit = make([]byte, len(ix.ofRow)/8+1)
			}
			for r := range len(ix.ofRow) {
				if share > 0 && rng.IntN(100) < share {
					admit[r/8] |= 1 << (r % 8)
				}
			}
			for _, k := range []int{1, 7, 40} {
				lexWalkParts = func(int) int { return 1 }
				lexSparse = 0
				lexWindowFrom = math.MaxInt
				walked := ix.top(phrases, k, admit, true)
				lexWindowFrom = 0
				for _, n := range []int{64, 1 << 20} {
					for _, b := range []int{64, 3} { // bounds of blocks of b postings
						lexWindow, lexBlock = n, b
						if windows := ix.top(phrases, k, admit, true); fmt.Sprint(windows) != fmt.Sprint(walked) {
							t.Fatalf("%q, %d%% of the rows, k=%d: walked in windows of %d, blocks of %d %v, a document at a time %v", q, share, k, n, b, windows, walked)
						}
					}
				}
				lexWindow, lexBlock = 64, 64
				for _, parts := range []int{2, 3} {
					lexWalkParts = func(int) int { return parts }
					if inParts := ix.top(phrases, k, admit, true); fmt.Sprint(inParts) != fmt.Sprint(walked) {
						t.Fatalf("%q, %d%% of the rows, k=%d: walked in %d parts %v, at once %v", q, share, k, parts, inParts, walked)
					}
				}
				if admit == nil {
					continue
				}
				lexSparse = math.MaxInt32
				if _, ok := ix.admittedDocs(ix.maxScore(phrases, k, admit), admit, admitCount(admit)); !ok && slices.ContainsFunc(phrases, func(p *lexPostings) bool { return p != nil && len(p.docs) > 0 }) {
					t.Fatalf("%q: the rows of a set were not scored one by one", q)
				}
				each := ix.top(phrases, k, admit, true)
				if fmt.Sprint(each) != fmt.Sprint(walked) {
					t.Fatalf("%q, %d%% of the rows, k=%d: scored one by one %v, walked %v", q, share, k, each, walked)
				}
			}
		}
	}
}

// TestBlockBoundsHold checks that blockBounds bounds what every posting
// of a term gives bm25Term: when first computed, after postings come into
// the last block bounded in part and past it, and after the mean document
// length grows past what the bounds were computed for.
func TestBlockBoundsHold(t *testing.T) {
	defer func(n int) { lexBlock = n }(lexBlock)
	lexBlock = 4
	ix := newLexIndex()
	rowid := int64(0)
	addRow := func(content string) {
		rowid++
		if err := ix.add(rowid, content, ""); err != nil {
			t.Fatal(err)
		}
	}
	check := func(when string) {
		t.Helper()
		p := &ix.lists[ix.terms["lock"]]
		avgdl := float64(ix.nTok) / float64(ix.nRow)
		bound := p.blockBounds(avgdl, ix.length)
		if want := (len(p.docs) + lexBlock - 1) / lexBlock; len(bound) != want {
			t.Fatalf("%s: %d bounds for %d postings, want %d", when, len(bound), len(p.docs), want)
		}
		for i, d := range p.docs {
			if g := bm25Term(1, float64(p.twice(i))/2, float64(ix.length[d]), avgdl); g > float64(bound[i/lexBlock]) {
				t.Fatalf("%s: posting %d gives %v past its block's bound %v", when, i, g, bound[i/lexBlock])
			}
		}
	}
	// rows of 10 tokens: the mean stays until the last rows
	for range 10 { // 10 postings: the third block bounded in part
		addRow("lock" + strings.Repeat(" queue", 9))
	}
	check("first")
	addRow(strings.Repeat("lock ", 5) + strings.Repeat("queue ", 5)) // into the third block, the most of any
	check("a posting into a block bounded in part")
	for i := range 7 {
		addRow(strings.Repeat("lock ", 1+i%3) + strings.Repeat("queue ", 9-i%3))
	}
	check("postings past the blocks bounded")
	for range 40 {
		addRow("lock " + strings.Repeat("vacuum ", 200)) // the mean grows
	}
	check("the mean document length grown")
}

// TestLexiconRereadsPastItsLog checks that a lexicon whose position
// lex_log no longer holds (trimmed past it) reads the table again rather
// than miss what changed.
func TestLexiconRereadsPastItsLog(t *testing.T) {
	ctx := context.Background()
	c, _ := newCache(t)
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "postgres vacuum", 0)})
	c.HoldLexicon()
	waitLexicon(t, c)
	fresh := mk(memory.TypeInsight, "postgres replicas lag", 0)
	put(t, c, []memory.Entry{fresh})
	if _, err := c.db.Exec(`DELETE FROM lex_log`); err != nil { // as Commit trims it
		t.Fatal(err)
	}
	put(t, c, []memory.Entry{mk(memory.TypeInsight, "unrelated", 0)})
	hits, err := c.Search(ctx, "replicas", Filter{})
	if err != nil || len(hits) != 1 || hits[0].ID != fresh.ID {
		t.Fatalf("search past a trimmed log: %v %+v", err, hits)
	}
	waitLexicon(t, c)
	if n := sameSearch(t, c, []string{"replicas", "postgres"}, []Filter{{}}); n != 2 {
		t.Fatalf("the lexicon ranked %d of 2 searches after reading again", n)
	}
}

// TestLexiconStopsWithTheCache closes a cache while its lexicon is being
// read: Close waits for the reading goroutine, which gives up.
func TestLexiconStopsWithTheCache(t *testing.T) {
	c, _ := newCache(t)
	var entries []memory.Entry
	for i := range 3000 {
		entries = append(entries, mk(memory.TypeInsight, fmt.Sprintf("entry %d about postgres and redis", i), 0))
	}
	put(t, c, entries)
	c.HoldLexicon()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c.lex.mu.Lock()
	defer c.lex.mu.Unlock()
	if c.lex.done != nil {
		t.Fatal("Close returned with the lexicon still being read")
	}
}
