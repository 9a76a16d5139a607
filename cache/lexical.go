package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/rank"
)

// Lexical search: free text to a safe FTS5 query, and the BM25 ranking
// of what matches (top_bm25, topbm25.c).

// ErrNoWords is returned by Search for a query without any searchable word.
var ErrNoWords = errors.New("the query has no words to search for")

// Hit is a search result. Score is higher-is-better; BM25 is FTS5's raw
// bm25() (lower is better) for --explain.
type Hit struct {
	Row
	Score float64
	// BM25 and, set by SemanticSearch, the BM25 rank, cosine similarity,
	// fused score and what session context lent (see rank.Scores).
	rank.Scores
	// Set by SemanticSearch: the rank in the vector list (0: absent), the
	// entry's priors (when weighted), what the query's time did (1:
	// nothing), their product Weight, and how often the entry was opened.
	VecRank int
	Prior   rank.Prior
	Time    float64
	Weight  float64
	Reads   int
}

var wordRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[\p{L}\p{N}_]+`) })

// stopwords are dropped from queries (unless nothing else is left): they
// match most documents, cost the most to rank and add almost nothing to BM25.
var stopwords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does for from had has have he her
		his how i if in into is it its me my no not of on or our she so than that the their them then there these they
		this to was we were what when where which who why will with would you your`) {
		m[w] = true
	}
	return m
}()

// Stopword reports whether w (lower case) is one of the common words
// searches ignore.
func Stopword(w string) bool { return stopwords[w] }

// MatchQuery turns free text into a safe FTS5 query: every word quoted, any
// of them may match, BM25 ranks documents that match more (and rarer) words
// first. Operators and punctuation in user input are never interpreted.
func MatchQuery(text string) (string, error) {
	words, err := queryWords(text)
	if err != nil {
		return "", err
	}
	return matchOf(words), nil
}

// matchOf is the FTS5 query of words any of which may match.
func matchOf(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + w + `"`
	}
	return strings.Join(q, " OR ")
}

// queryWords are the words of free text a search looks for: lower case,
// each once, stopwords left out unless nothing else is left.
func queryWords(text string) ([]string, error) {
	words := wordRE().FindAllString(strings.ToLower(text), 64)
	if len(words) == 0 {
		return nil, ErrNoWords
	}
	content := words[:0:0]
	for _, w := range words {
		if !stopwords[w] {
			content = append(content, w)
		}
	}
	if len(content) > 0 {
		words = content
	}
	seen := map[string]bool{}
	var q []string
	for _, w := range words {
		if !seen[w] {
			seen[w] = true
			q = append(q, w)
		}
	}
	return q, nil
}

// Search ranks matching entries by BM25 (content weighted over tags).
// FTS5 ranks first and only the best candidates are joined with their rows
// and filtered, so the cost follows the number of matches, not the size of
// the rows; when filters reject too many, it widens the candidate window.
func (c *Cache) Search(ctx context.Context, text string, f Filter) ([]Hit, error) {
	return c.search(ctx, text, f, true)
}

// search is Search; alone says that nothing else runs meanwhile (a
// hybrid search's query embedding and vector ranking do), so that the
// lexicon's walk may take every core.
func (c *Cache) search(ctx context.Context, text string, f Filter, alone bool) ([]Hit, error) {
	words, err := queryWords(text)
	if err != nil {
		return nil, err
	}
	mq := matchOf(words)
	w, args := f.where()
	lim := f.Limit
	if lim <= 0 {
		lim = 10
	}
	// none of these types at all (commits in a repository that never
	// indexed them): no match query
	if some, err := c.anyOf(ctx, f.Types); err != nil || !some {
		return nil, err
	}
	// top_bm25 ranks as bm25(fts, 1.0, 0.5) but skips rows that cannot
	// make the window, and with a set of admitted rows, every other row.
	// CROSS JOIN keeps the matches the outer loop: left to itself, SQLite
	// walked every entry of the filter's types and looked each up among
	// the matches (300 ms of a search at 300k entries, 28 ms of it FTS5).
	q := `SELECT ` + rowCols + `, r.rank FROM (SELECT rowid, top_bm25(fts, ?, ?, 1.0, 0.5) AS rank FROM fts WHERE fts MATCH ? ORDER BY rank, rowid LIMIT ?) r
		CROSS JOIN entries e ON e.rowid = r.rowid WHERE ` + w + ` ORDER BY r.rank * ` + feedback + `, e.created DESC, e.id LIMIT ?`
	window := 4 * lim
	// a long-lived process ranks with the lexicon it holds, to the same
	// rows and scores
	lx, phrases, err := c.lexicon(ctx, words)
	if err != nil {
		return nil, err
	}
	ranked := func(admit []byte) ([]Hit, error) {
		if lx != nil {
			return c.heldHits(ctx, lx.top(phrases, window, admit, alone), f, lim)
		}
		var a any // NULL: every row
		if admit != nil {
			a = admit
		}
		return c.searchQuery(ctx, q, append(append([]any{window, a, mq, window}, args...), lim)...)
	}
	aw, aargs := f.admitting()
	key := admitKey(aw, aargs)
	if !c.fewer[key] && !c.admitsFew(ctx, key) {
		hits, err := ranked(nil)
		if err != nil || len(hits) >= lim {
			return hits, err
		}
		// the window held every match: nothing else to find
		if more, err := c.matchesOver(ctx, lx, phrases, mq, window); err != nil || !more {
			return hits, err
		}
	}
	// The filter admits few of the best matches (commits among much
	// memory): one pass in which top_bm25 scores only the rows the filter
	// admits, exact for any filter. Wider windows over every match took
	// 42 ms for the commits of a search at 300k entries (three passes);
	// every match at once scored and sorted all of them. A filter found
	// to admit few of the rows (here before, or by the vector lanes)
	// starts here.
	admit, share, err := c.admittedBits(ctx, aw, aargs)
	if err != nil {
		return nil, err
	}
	if share < minShare {
		if len(c.fewer) >= 64 { // a handful of filters in turn; never many
			clear(c.fewer)
		}
		if c.fewer == nil {
			c.fewer = map[string]bool{}
		}
		c.fewer[key] = true
	}
	return ranked(admit)
}

// matchesOver reports whether more than n rows match the query: mq for
// FTS5, phrases for the lexicon lx when there is one.
func (c *Cache) matchesOver(ctx context.Context, lx *lexIndex, phrases []*lexPostings, mq string, n int) (bool, error) {
	if lx != nil {
		return lx.matches(phrases, n), nil
	}
	var more int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM fts WHERE fts MATCH ? LIMIT ?)`, mq, n+1).Scan(&more)
	return more > n, err
}

// admitsFew reports whether the vector lanes found that the filter named
// key admits few of the rows (sampleShare, this generation of entries).
func (c *Cache) admitsFew(ctx context.Context, key string) bool {
	share, ok := c.admits.shares[key]
	if !ok || c.admits.gen == "" {
		return false
	}
	gen, err := c.Meta(ctx, "entries_gen")
	return err == nil && strings.HasPrefix(c.admits.gen, gen+"/") && share < minShare
}

// admittedBits is the set of rows the filter (w, args) admits as
// top_bm25 reads it (bit rowid%8 of byte rowid/8), and about what share
// of the rows that is (of the rowids up to the highest in use). A
// long-lived process keeps the set, current with the table (heldAdmits),
// as its vector lanes do: reading it on every search was a quarter of the
// MCP server's work in searches at 132k entries.
func (c *Cache) admittedBits(ctx context.Context, w string, args []any) ([]byte, float64, error) {
	set, err := c.heldAdmits(ctx, w, args)
	if err == nil && set == nil {
		set, err = readAdmitted(ctx, c.db, w, args)
	}
	if err != nil {
		return nil, 0, err
	}
	var top int64
	if err := c.db.QueryRowContext(ctx, `SELECT coalesce(max(rowid), 0) FROM entries`).Scan(&top); err != nil {
		return nil, 0, fmt.Errorf("cache: admitted rows: %w", err)
	}
	b := make([]byte, 8*len(set))
	n := 0
	for i, w := range set {
		binary.LittleEndian.PutUint64(b[8*i:], w)
		n += bits.OnesCount64(w)
	}
	return b, float64(n) / float64(max(1, top)), nil
}

// feedback scales a (negative, lower is better) BM25 rank by relevance
// feedback, rank.Feedback in SQL: an entry marked relevant with score s
// ranks as if (1+s) times as good a match; one marked irrelevant as
// rank.IrrelevantFeedback of one.
var feedback = `(CASE WHEN e.irrelevant THEN ` + strconv.FormatFloat(rank.IrrelevantFeedback, 'g', -1, 64) + ` ELSE 1 + e.relevance END)`

func (c *Cache) searchQuery(ctx context.Context, q string, args ...any) ([]Hit, error) {
	rows, err := c.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: search: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		r, err := scanRow(rows, &h.BM25)
		if err != nil {
			return nil, err
		}
		h.Row, h.Score = r, rank.Lexical(h.BM25, r.State)
		out = append(out, h)
	}
	return out, rows.Err()
}

// WithAllWords returns up to limit entries of types (archived ones
// excluded) among the first 4×limit whose text holds every one of
// words: an FTS5 AND query, cheap because it intersects posting lists
// instead of ranking every match, and stops at those. CROSS JOIN keeps
// the matches the outer loop: given the types' condition, SQLite walked
// every entry of those types by its index instead (115 ms of a save at
// a million entries).
func (c *Cache) WithAllWords(ctx context.Context, words []string, types []memory.Type, limit int) ([]Row, error) {
	if len(words) == 0 {
		return nil, ErrNoWords
	}
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
	}
	w, args := Filter{Types: types}.where()
	return c.queryRows(ctx, "search", `SELECT `+rowCols+` FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?) m CROSS JOIN entries e ON e.rowid = m.rowid WHERE `+w+` LIMIT ?`,
		append(append([]any{strings.Join(q, " AND "), 4 * limit}, args...), limit)...)
}
