package cache

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/rank"
)

// lexHolder is the lexicon a long-lived process keeps (HoldLexicon), and
// the goroutine that reads it, on a connection of its own, while Search
// ranks with FTS5.
type lexHolder struct {
	path   string
	mu     sync.Mutex
	ix     *lexIndex     // nil until read, and while read again
	done   chan struct{} // closed when the read in flight ends; nil when none
	cancel context.CancelFunc
	failed time.Time // when the last read failed: the next waits a minute
	closed bool
}

// HoldLexicon makes the cache keep the fts table's terms in memory and
// rank Search's BM25 with them (lexindex.go), for the many searches of a
// long-lived process; it starts reading them at once, in the background.
// A command run once gains nothing from it.
func (c *Cache) HoldLexicon() {
	if c.lex != nil {
		return
	}
	c.lex = &lexHolder{path: c.path}
	c.lex.mu.Lock()
	c.lex.start()
	c.lex.mu.Unlock()
}

// WaitLexicon waits until the lexicon HoldLexicon started reading has
// been read, or ctx ends; false when there is none to wait for (not held,
// or its reading failed).
func (c *Cache) WaitLexicon(ctx context.Context) bool {
	h := c.lex
	if h == nil {
		return false
	}
	h.mu.Lock()
	ix, done := h.ix, h.done
	h.mu.Unlock()
	if ix != nil || done == nil {
		return ix != nil
	}
	select {
	case <-done:
	case <-ctx.Done():
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.ix != nil
}

// start reads the lexicon in the background; h.mu is held.
func (h *lexHolder) start() {
	if h.closed || h.done != nil || time.Since(h.failed) < time.Minute {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.done, h.cancel = done, cancel
	go func() {
		defer close(done)
		ix, err := readLexicon(ctx, h.path)
		h.mu.Lock()
		defer h.mu.Unlock()
		h.done, h.cancel = nil, nil
		cancel()
		if err != nil {
			h.failed = time.Now()
			return
		}
		h.ix = ix
	}()
}

// stop ends the read in flight and waits for it.
func (h *lexHolder) stop() {
	if h == nil {
		return
	}
	h.mu.Lock()
	h.closed = true
	cancel, done := h.cancel, h.done
	h.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

// lexMinPart is the fewest rows readLexicon reads in a part of its own.
var lexMinPart int64 = 1 << 13

// lexParts is how many parts readLexicon reads at once: one per CPU but
// one, up to 4. The CPU left over answers requests meanwhile: with both
// of this project's two, a million-entry MCP server's first 30 saves took
// 93 ms each in the 3 s the lexicon took (make bench BENCH=1M at 82e73e9).
var lexParts = func() int64 { return int64(max(1, min(runtime.GOMAXPROCS(0)-1, 4))) }

// readLexicon reads every row of the fts table on connections of its own
// (the cache's one connection stays free for searches meanwhile), in
// parts of the rowids (lexParts). Each part is read in a snapshot of its
// own: the lexicon starts from the oldest one's lex_log position, so
// that following it reads again what any part may have missed.
func readLexicon(ctx context.Context, path string) (*lexIndex, error) {
	open := func() (*sql.DB, error) {
		db, err := sql.Open("sqlite3", fmt.Sprintf("file:%s?_busy_timeout=5000&_txlock=deferred&_query_only=1", path))
		if err == nil {
			db.SetMaxOpenConns(1)
		}
		return db, err
	}
	db, err := open()
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var top int64
	if err := db.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM fts`).Scan(&top); err != nil {
		return nil, fmt.Errorf("cache: lexicon: %w", err)
	}
	n := max(1, min(lexParts(), top/lexMinPart))
	parts := make([]*lexIndex, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		lo, hi := top*i/n+1, top*(i+1)/n+1
		if i == 0 {
			lo = math.MinInt64
		}
		if i == n-1 {
			hi = math.MaxInt64
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			pdb := db
			if i > 0 {
				if pdb, errs[i] = open(); errs[i] != nil {
					return
				}
				defer pdb.Close()
			}
			parts[i] = newLexIndex()
			errs[i] = parts[i].read(ctx, pdb, lo, hi)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	ix := parts[0]
	for _, p := range parts[1:] {
		ix.absorb(p)
	}
	return ix, nil
}

// lexicon returns the lexicon, brought up to the table, and the query's
// words as its phrases; nil when FTS5 must rank (no lexicon held, not
// read yet, or a word that FTS5 reads as no token).
func (c *Cache) lexicon(ctx context.Context, words []string) (*lexIndex, []*lexPostings, error) {
	h := c.lex
	if h == nil {
		return nil, nil, nil
	}
	h.mu.Lock()
	ix := h.ix
	if ix != nil {
		if err := ix.follow(ctx, c.db); err != nil {
			// half followed, or the table was reset: read it again
			h.ix, ix = nil, nil
		}
	}
	if ix == nil {
		h.start()
	}
	h.mu.Unlock()
	if ix == nil {
		return nil, nil, nil
	}
	phrases, ok, err := c.lexPhrases(ctx, ix, words)
	if err != nil || !ok {
		return nil, nil, err
	}
	return ix, phrases, nil
}

// lexPhrases turns the query's words into the postings of the phrases
// FTS5 makes of them, in order: a term's, held (nil when no row holds
// it), or, for a word of several tokens, read from FTS5 for this query;
// false for a word of no token at all.
func (c *Cache) lexPhrases(ctx context.Context, ix *lexIndex, words []string) ([]*lexPostings, bool, error) {
	js, _ := json.Marshal(words)
	rows, err := c.db.QueryContext(ctx, `SELECT fts_tokens(value) FROM json_each(?) ORDER BY key`, string(js))
	if err != nil {
		return nil, false, fmt.Errorf("cache: search: %w", err)
	}
	var toks []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return nil, false, fmt.Errorf("cache: search: %w", err)
		}
		toks = append(toks, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("cache: search: %w", err)
	}
	phrases := make([]*lexPostings, len(words))
	for i, t := range toks {
		switch n := strings.Count(t, " ") + 1; {
		case t == "":
			return nil, false, nil
		case n == 1:
			if id, ok := ix.terms[t]; ok {
				phrases[i] = &ix.lists[id]
			}
		default:
			p, err := c.phrasePostings(ctx, ix, words[i])
			if err != nil {
				return nil, false, err
			}
			phrases[i] = p
		}
	}
	return phrases, true, nil
}

// phrasePostings reads from FTS5 the rows holding a word it makes a
// phrase of several tokens ("foo_bar": foo then bar), with its count.
func (c *Cache) phrasePostings(ctx context.Context, ix *lexIndex, word string) (*lexPostings, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT rowid, fts_freq2(fts) FROM fts WHERE fts MATCH ?`, `"`+word+`"`)
	if err != nil {
		return nil, fmt.Errorf("cache: search: %w", err)
	}
	defer rows.Close()
	type posting struct{ doc, f2 uint32 }
	var ps []posting
	for rows.Next() {
		var rowid, f2 int64
		if err := rows.Scan(&rowid, &f2); err != nil {
			return nil, fmt.Errorf("cache: search: %w", err)
		}
		if rowid >= 0 && rowid < int64(len(ix.ofRow)) && ix.ofRow[rowid] != lexNone {
			ps = append(ps, posting{ix.ofRow[rowid], uint32(min(f2, 1<<31))})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("cache: search: %w", err)
	}
	slices.SortFunc(ps, func(a, b posting) int { return int(a.doc) - int(b.doc) })
	p := &lexPostings{}
	for _, x := range ps {
		p.add(x.doc, x.f2, ix.length[x.doc])
	}
	return p, nil
}

// heldHits joins the lexicon's best rows with their entries, keeps those
// the filter admits and orders them as Search's SQL does: by BM25 scaled
// by feedback, then newest, then id; the first lim.
func (c *Cache) heldHits(ctx context.Context, best []lexHit, f Filter, lim int) ([]Hit, error) {
	if len(best) == 0 {
		return nil, nil
	}
	// The window holds 4×lim matches in case the filter rejects some; the
	// rows the filter admits are ranked on the columns the order needs,
	// and only the best lim read whole (a prompt's lexical lane at 10k
	// entries: 2.2 ms when all 200 were read whole).
	admitted, err := c.lexAdmitted(ctx, best, f)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(admitted, func(a, b lexRanked) int {
		switch {
		case a.key < b.key:
			return -1
		case a.key > b.key:
			return 1
		case a.created != b.created:
			return cmp.Compare(b.created, a.created)
		}
		return strings.Compare(a.id, b.id)
	})
	admitted = admitted[:min(lim, len(admitted))]
	top := make([]int64, len(admitted))
	for i, r := range admitted {
		top[i] = best[r.i].rowid
	}
	byRow, err := c.rowsByRowid(ctx, top)
	if err != nil {
		return nil, fmt.Errorf("cache: search: %w", err)
	}
	out := make([]Hit, 0, len(admitted))
	for _, r := range admitted {
		row, ok := byRow[best[r.i].rowid]
		if !ok {
			continue // gone between the two reads: a write in between
		}
		h := Hit{Row: row}
		h.BM25 = best[r.i].rank
		h.Score = rank.Lexical(h.BM25, row.State)
		out = append(out, h)
	}
	return out, nil
}

// lexRanked is one of the lexicon's best rows (best[i]) that a filter
// admits, with what Search's order needs of it.
type lexRanked struct {
	i       int
	key     float64 // BM25 × feedback: lower is better
	created int64
	id      string
}

// lexAdmitted returns the rows of best the filter admits, each with what
// the order needs: from the filter's set and the rows held whole when the
// cache holds them (heldSet, heldRow), the others asked of SQL. The set is
// not read for this: a hybrid search's vector lanes made it already, and
// for a BM25 search alone it would cost a scan of the filter's rows (0.2
// s at a million entries). The rows the set admits that are not held
// whole are read whole, and held, for the next search whose best rows
// hold them (a prompt's words are mostly its session's last prompts'):
// asked of SQL by each prompt, the 79 of a prompt's 200 best at a
// million entries took 0.5 ms of it.
func (c *Cache) lexAdmitted(ctx context.Context, best []lexHit, f Filter) ([]lexRanked, error) {
	aw, aargs := f.admitting()
	held, _, err := c.heldSet(ctx, aw, aargs)
	if err != nil {
		return nil, err
	}
	var admitted []lexRanked
	ranked := func(i int, row Row) {
		admitted = append(admitted, lexRanked{i, float64(best[i].rank * rank.Feedback(row.State)), row.Created.UnixNano(), row.ID})
	}
	var ask, read []int // places in best: asked of SQL with the filter; read whole
	for i, b := range best {
		switch row, ok := c.heldRow(b.rowid); {
		case held == nil:
			ask = append(ask, i)
		case !has(held, b.rowid):
		case ok:
			ranked(i, row)
		default:
			read = append(read, i)
		}
	}
	if len(read) > 0 {
		ids := make([]int64, len(read))
		for k, i := range read {
			ids[k] = best[i].rowid
		}
		rows, err := c.rowsByRowid(ctx, ids)
		if err != nil {
			return nil, fmt.Errorf("cache: search: %w", err)
		}
		for _, i := range read {
			if row, ok := rows[best[i].rowid]; ok { // else gone since the set was current
				ranked(i, row)
			}
		}
	}
	if len(ask) == 0 {
		return admitted, nil
	}
	ids := make([]int64, len(ask))
	for k, i := range ask {
		ids[k] = best[i].rowid
	}
	idJSON, _ := json.Marshal(ids)
	w, args := f.where()
	rows, err := c.db.QueryContext(ctx, `SELECT j.key, e.relevance, e.irrelevant, e.created, e.id FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value WHERE `+w,
		append([]any{string(idJSON)}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("cache: search: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var r lexRanked
		var st memory.State
		if err := rows.Scan(&r.i, &st.Relevance, &st.Irrelevant, &r.created, &r.id); err != nil {
			return nil, err
		}
		r.i = ask[r.i]
		r.key = float64(best[r.i].rank * rank.Feedback(st))
		admitted = append(admitted, r)
	}
	return admitted, rows.Err()
}

// unsafeString views b as a string without copying; b must not change
// while the string is in use.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
