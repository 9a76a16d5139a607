package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// The lexicon: the fts table's terms held in memory by a long-lived
// process (HoldLexicon), for Search's BM25 ranking.
//
// FTS5 ranks an OR query by calling the ranking function on every row
// that holds any of its words: at a million entries a query of common
// words matches hundreds of thousands of rows (81 ms a warm BM25 search;
// at 360k entries, 145 ms to rank one query's matches where counting
// them took 13). The lexicon holds, per term,
// the rows that hold it (in the order they were read) with how often,
// and the length of every row, and ranks with MaxScore: rows that only
// hold words whose best possible share cannot lift them into the top k
// are never scored. It computes bm25() as top_bm25 does (topbm25.c),
// the same operations in the same order and the C library's log, over
// the same counts, which it reads through FTS5's own tokenizer
// (fts_tokens): the same rows in the same order with the same scores,
// to the bit (TestLexiconRanksAsFTS5).
//
// It follows the table through lex_log, where triggers on entries write
// the rowid of every row whose text came, changed or went (kind 0):
// before each search it reads the rows named since, drops their old
// postings (by marking the old document dead) and adds the new. A reset
// of the cache, a log cut short past what it read or too many dead
// documents make it build itself again, in the background; until then
// Search asks FTS5.

// lexK1, lexB are bm25()'s parameters, variables so that k1 + 1.0 is
// computed at run time, rounded as C rounds it.
var lexK1, lexB = 1.2, 0.75

// lexBig marks a count too large for a posting's 16 bits, kept in the
// list's big map instead.
const lexBig = math.MaxUint16

// lexLogKeep is how many of its last rows lex_log keeps (Tx.Commit).
const lexLogKeep = 1 << 16

// lexNone marks a rowid without a live document.
const lexNone = math.MaxUint32

// lexMaxRowid bounds the rowids the lexicon maps densely (4 bytes each);
// a cache with larger ones is ranked by FTS5.
const lexMaxRowid = 1 << 26

// lexPostings are the documents holding one term, in increasing order,
// with twice the term's weighted count in each (content counts 2, tags 1:
// the weights 1.0 and 0.5 Search ranks with).
type lexPostings struct {
	docs  []uint32
	freq2 []uint16
	big   map[uint32]uint32 // doc -> twice the count, where freq2 is lexBig
	max2  uint32            // the largest twice-count ever added
	minD  uint32            // the shortest document ever added
	df    int64             // live documents, as of deadGen dfGen
	dfGen int

	// blockBounds': per lexBlock postings (boundBlock when computed),
	// the most one gives bm25() per unit of idf while the mean document
	// length is at most boundDL; over the first boundN postings
	bound      []float32
	boundN     int
	boundBlock int
	boundDL    float64
}

func (p *lexPostings) add(doc, f2, length uint32) {
	if len(p.docs) == 0 || length < p.minD {
		p.minD = length
	}
	p.max2 = max(p.max2, f2)
	p.docs = append(p.docs, doc)
	if f2 >= lexBig {
		if p.big == nil {
			p.big = map[uint32]uint32{}
		}
		p.big[doc] = f2
		f2 = lexBig
	}
	p.freq2 = append(p.freq2, uint16(f2))
}

func (p *lexPostings) twice(i int) uint32 {
	if f := p.freq2[i]; f != lexBig {
		return uint32(f)
	}
	return p.big[p.docs[i]]
}

// lexIndex is the lexicon at one position of lex_log.
type lexIndex struct {
	terms   map[string]uint32 // term -> index in lists
	lists   []lexPostings
	rowid   []int64  // by document
	length  []uint32 // by document: tokens in all columns
	dead    []uint64 // bit per document
	ofRow   []uint32 // by rowid: the live document, or lexNone
	nDead   int
	deadGen int // counts deaths, for lexPostings.df
	nRow    int64
	nTok    int64
	seq     int64 // the last lex_log row read

	// scratch for add
	count   []uint32
	touched []uint32
}

func newLexIndex() *lexIndex { return &lexIndex{terms: map[string]uint32{}} }

// add indexes a row from its columns' tokens (fts_tokens), replacing the
// document the rowid had.
func (ix *lexIndex) add(rowid int64, content, tags string) error {
	if rowid < 0 || rowid >= lexMaxRowid {
		return fmt.Errorf("cache: lexicon: rowid %d out of range", rowid)
	}
	ix.remove(rowid)
	doc := uint32(len(ix.rowid))
	var n uint32
	for col, text := range [2]string{content, tags} {
		w := uint32(2 - col) // content counts 2, tags 1
		for len(text) > 0 {
			tok := text
			if i := strings.IndexByte(text, ' '); i >= 0 {
				tok, text = text[:i], text[i+1:]
			} else {
				text = ""
			}
			if tok == "" {
				continue
			}
			n++
			id := ix.termID(tok)
			if ix.count[id] == 0 {
				ix.touched = append(ix.touched, id)
			}
			ix.count[id] += w
		}
	}
	for _, id := range ix.touched {
		ix.lists[id].add(doc, ix.count[id], n)
		ix.count[id] = 0
	}
	ix.touched = ix.touched[:0]
	ix.rowid = append(ix.rowid, rowid)
	ix.length = append(ix.length, n)
	ix.place(rowid, doc)
	ix.nRow++
	ix.nTok += int64(n)
	return nil
}

// termID is the index of term's postings, made empty for a new term (the
// lexicon keeps a copy of term: it may view bytes SQLite reuses).
func (ix *lexIndex) termID(term string) uint32 {
	id, ok := ix.terms[term]
	if !ok {
		id = uint32(len(ix.lists))
		ix.terms[strings.Clone(term)] = id
		ix.lists = append(ix.lists, lexPostings{})
		ix.count = append(ix.count, 0)
	}
	return id
}

// place makes doc the live document of rowid, with room for both.
func (ix *lexIndex) place(rowid int64, doc uint32) {
	for int(doc)/64 >= len(ix.dead) {
		ix.dead = append(ix.dead, 0)
	}
	for int64(len(ix.ofRow)) <= rowid {
		ix.ofRow = append(ix.ofRow, lexNone)
	}
	ix.ofRow[rowid] = doc
}

// remove marks the rowid's document dead, if it has one.
func (ix *lexIndex) remove(rowid int64) {
	if rowid < 0 || rowid >= int64(len(ix.ofRow)) || ix.ofRow[rowid] == lexNone {
		return
	}
	doc := ix.ofRow[rowid]
	ix.ofRow[rowid] = lexNone
	ix.dead[doc/64] |= 1 << (doc % 64)
	ix.nDead++
	ix.deadGen++
	ix.nRow--
	ix.nTok -= int64(ix.length[doc])
}

func (ix *lexIndex) isDead(doc uint32) bool { return ix.dead[doc/64]&(1<<(doc%64)) != 0 }

// liveDF is how many live documents hold the term.
func (ix *lexIndex) liveDF(p *lexPostings) int64 {
	if ix.nDead == 0 {
		return int64(len(p.docs))
	}
	if p.dfGen != ix.deadGen {
		var n int64
		for _, d := range p.docs {
			if !ix.isDead(d) {
				n++
			}
		}
		p.df, p.dfGen = n, ix.deadGen
	}
	return p.df
}

// read fills the lexicon with the rows of the fts table from rowid lo up
// to hi (excluded), and the lex_log position they were read at, in one
// read transaction of db.
func (ix *lexIndex) read(ctx context.Context, db *sql.DB, lo, hi int64) error {
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fmt.Errorf("cache: lexicon: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) FROM lex_log`).Scan(&ix.seq); err != nil {
		return fmt.Errorf("cache: lexicon: %w", err)
	}
	return ix.addRows(tx.QueryContext(ctx, `SELECT rowid, `+lexColumns+` FROM fts WHERE rowid >= ? AND rowid < ?`, lo, hi))
}

// lexColumns are the fts table's columns as the lexicon reads them.
const lexColumns = `fts_tokens(content), fts_tokens(tags)`

// addRows indexes every row of a query of rowid and lexColumns.
func (ix *lexIndex) addRows(rows *sql.Rows, err error) error {
	if err != nil {
		return fmt.Errorf("cache: lexicon: %w", err)
	}
	defer rows.Close()
	var content, tags sql.RawBytes
	for rows.Next() {
		var rowid int64
		if err := rows.Scan(&rowid, &content, &tags); err != nil {
			return fmt.Errorf("cache: lexicon: %w", err)
		}
		if err := ix.add(rowid, unsafeString(content), unsafeString(tags)); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("cache: lexicon: %w", err)
	}
	return nil
}

// absorb appends the documents of p, read from rowids past ix's, to ix.
func (ix *lexIndex) absorb(p *lexIndex) {
	base := uint32(len(ix.rowid))
	for term, pid := range p.terms {
		to, from := &ix.lists[ix.termID(term)], &p.lists[pid]
		if len(to.docs) == 0 || from.minD < to.minD {
			to.minD = from.minD
		}
		to.max2 = max(to.max2, from.max2)
		for _, d := range from.docs {
			to.docs = append(to.docs, d+base)
		}
		to.freq2 = append(to.freq2, from.freq2...)
		for d, f := range from.big {
			if to.big == nil {
				to.big = map[uint32]uint32{}
			}
			to.big[d+base] = f
		}
	}
	ix.rowid = append(ix.rowid, p.rowid...)
	ix.length = append(ix.length, p.length...)
	for doc, r := range p.rowid {
		ix.place(r, uint32(doc)+base)
	}
	ix.nRow += p.nRow
	ix.nTok += p.nTok
	ix.seq = min(ix.seq, p.seq)
}

// errLexRebuild says the lexicon cannot follow the table from where it
// is and must be read again.
var errLexRebuild = fmt.Errorf("cache: lexicon: read it again")

// follow brings the lexicon up to the table: the rows lex_log names
// after its position are read again. errLexRebuild when it cannot.
func (ix *lexIndex) follow(ctx context.Context, db *sql.DB) error {
	changed, last, ok, err := logSince(ctx, db, ix.seq, true, int(max(ix.nRow/8, 4096)))
	switch {
	case err != nil:
		return fmt.Errorf("cache: lexicon: %w", err)
	case !ok:
		return errLexRebuild // cut short past our position, reset, or as cheap to read everything
	case len(changed) == 0:
		ix.seq = last
		return nil
	}
	for _, r := range changed {
		ix.remove(r)
	}
	idJSON, _ := json.Marshal(changed)
	if err := ix.addRows(db.QueryContext(ctx, `SELECT rowid, `+lexColumns+` FROM fts WHERE rowid IN (SELECT value FROM json_each(?)) ORDER BY rowid`, string(idJSON))); err != nil {
		return err
	}
	ix.seq = last
	if ix.nDead > max(int(ix.nRow)/4, 4096) {
		return errLexRebuild // mostly dead postings: read afresh
	}
	return nil
}
