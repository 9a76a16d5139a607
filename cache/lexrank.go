package cache

// #include <math.h>
import "C"

import (
	"cmp"
	"encoding/binary"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"
)

// Ranking with the lexicon (lexindex.go): bm25() as top_bm25 computes
// it, over the rows MaxScore cannot rule out.

// lexHit is a ranked row: its BM25 as bm25() gives it (negative, lower
// is better).
type lexHit struct {
	rowid int64
	rank  float64
}

// bm25Term is one phrase's part of a row's BM25, as top_bm25 (topScore)
// computes it: every product rounded on its own, never fused.
func bm25Term(idf, f, d, avgdl float64) float64 {
	num := float64(f * float64(lexK1+1.0))
	x := float64(lexB*d) / avgdl
	den := f + float64(lexK1*float64((1-lexB)+x))
	return float64(idf * float64(num/den))
}

// idf is bm25()'s inverse document frequency, through the C library's
// log as FTS5 computes it.
func idf(nRow, nHit int64) float64 {
	v := float64(C.log(C.double((float64(nRow-nHit) + 0.5) / (float64(nHit) + 0.5))))
	if v <= 0 {
		v = 1e-6
	}
	return v
}

// lexCursor walks one phrase's postings for top.
type lexCursor struct {
	at     uint32 // docs[pos], lexNone past the end: one load to compare
	pos    int
	docs   []uint32 // p.docs
	p      *lexPostings
	phrase int
	idf    float64
	ub     float64   // the most this phrase can add to a row's score
	bound  []float32 // p's blockBounds, in a large index
	blk    int       // the block of postings room looked in last
}

// newLexCursor is a cursor at p's first posting.
func newLexCursor(p *lexPostings) lexCursor {
	c := lexCursor{p: p, docs: p.docs, pos: -1}
	c.advance()
	return c
}

// advance moves the cursor to its next posting.
func (c *lexCursor) advance() {
	c.pos++
	c.at = lexNone
	if c.pos < len(c.docs) {
		c.at = c.docs[c.pos]
	}
}

// term is what the phrase adds to the score of the row the cursor is
// at, of d tokens, as bm25() computes it.
func (c *lexCursor) term(d, avgdl float64) float64 {
	return bm25Term(c.idf, float64(c.p.twice(c.pos))/2, d, avgdl)
}

// seek moves the cursor to the first posting at or after doc.
func (c *lexCursor) seek(doc uint32) {
	if c.at >= doc {
		return
	}
	c.pos = gallop(c.docs, c.pos, len(c.docs), doc)
	c.at = lexNone
	if c.pos < len(c.docs) {
		c.at = c.docs[c.pos]
	}
}

// gallop returns the place of the first of docs[from:to] at or after
// doc (to if none), in steps that double from from, then a binary search:
// a few steps to a document near from, as many as a binary search to one
// far off.
func gallop(docs []uint32, from, to int, doc uint32) int {
	step, lo := 1, from
	hi := lo + step
	for hi < to && docs[hi] < doc {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, to)
	i, _ := slices.BinarySearch(docs[lo:hi], doc)
	return lo + i
}

// lexBlock is how many postings one of blockBounds' bounds covers (a
// variable: tests bound blocks of a few), and lexBoundRoom how far past
// the mean document length they are computed for, so that they hold
// while entries come.
var lexBlock = 64

const lexBoundRoom = 1.05

// blockBounds returns, for each lexBlock of p's postings in order, the
// most a posting of it gives bm25Term per unit of idf while the mean
// document length is at most avgdl·lexBoundRoom (bm25Term grows with the
// mean), rounded up: times the phrase's idf, a bound on what it gives
// any row the block holds. MaxScore bounds what the phrase gives a row
// by the most it gives any (lexCursor.ub); a block's bound is often half
// that. The bounds stay with p: the postings added since are bounded at
// the next call, and all of them again once the mean has grown past what
// they hold for, or shrunk far below it.
func (p *lexPostings) blockBounds(avgdl float64, length []uint32) []float32 {
	if p.boundBlock != lexBlock || avgdl > p.boundDL || avgdl*lexBoundRoom*lexBoundRoom < p.boundDL {
		p.bound, p.boundN, p.boundBlock, p.boundDL = p.bound[:0], 0, lexBlock, avgdl*lexBoundRoom
	}
	if p.boundN == len(p.docs) {
		return p.bound
	}
	b := p.boundN / lexBlock // a block bounded in part is bounded again
	p.bound = p.bound[:b]
	for lo := b * lexBlock; lo < len(p.docs); lo += lexBlock {
		g := 0.0
		for i := lo; i < min(lo+lexBlock, len(p.docs)); i++ {
			g = max(g, bm25Term(1, float64(p.twice(i))/2, float64(length[p.docs[i]]), p.boundDL))
		}
		v := float32(g)
		if float64(v) < g {
			v = math.Nextafter32(v, float32(math.Inf(1)))
		}
		p.bound = append(p.bound, v)
	}
	p.boundN = len(p.docs)
	return p.bound
}

// boundSlack widens bounds past the rounding of sums taken in another
// order than the score's.
const boundSlack = 1 + 1e-9

// top is the best k live rows holding any of the phrases, by BM25 then
// rowid, each with its bm25() value, among those admit holds (nil: all;
// else bit rowid%8 of byte rowid/8). alone says that nothing else runs
// meanwhile: the walk may take every core (walk).
func (ix *lexIndex) top(phrases []*lexPostings, k int, admit []byte, alone bool) []lexHit {
	if k <= 0 || ix.nRow == 0 {
		return nil
	}
	m := ix.maxScore(phrases, k, admit)
	n := admitCount(admit)
	var out []lexHit
	if docs, ok := ix.admittedDocs(m, admit, n); ok {
		m.scoreEach(docs)
		out = m.h
	} else {
		parts := 1
		if alone {
			parts = lexWalkParts(len(ix.rowid))
		}
		out = ix.walk(m, phrases, admit, parts)
	}
	slices.SortFunc(out, func(a, b lexHit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	for i := range out {
		out[i].rank = -1.0 * out[i].rank
	}
	return out
}

// walk is top's walk of the postings with m, in parts of the documents
// walked at once, each by a maxScore of its own: the k best of each part,
// merged, are the k best of all. On the lexicon of the million-entry
// bench repository, three queries' walks took 4.2, 1.3 and 6.1 ms in two
// parts on two cores, against 7.0, 3.3 and 10.4 ms in one. A hybrid
// search walks in one part: the query's embedding holds another core
// meanwhile, and the walk's parts took it from the embedding.
func (ix *lexIndex) walk(m *maxScore, phrases []*lexPostings, admit []byte, parts int) []lexHit {
	end := uint32(len(ix.rowid))
	if parts <= 1 {
		m.walkTo(end)
		return m.h
	}
	ms := []*maxScore{m}
	for range parts - 1 {
		ms = append(ms, ix.maxScore(phrases, m.k, admit))
	}
	var wg sync.WaitGroup
	for i := 1; i < parts; i++ {
		lo, hi := uint32(uint64(end)*uint64(i)/uint64(parts)), uint32(uint64(end)*uint64(i+1)/uint64(parts))
		for j := range ms[i].cur {
			ms[i].cur[j].seek(lo)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ms[i].walkTo(hi)
		}()
	}
	m.walkTo(uint32(uint64(end) / uint64(parts)))
	wg.Wait()
	h := m.h
	for _, o := range ms[1:] {
		for _, x := range o.h {
			h.offer(x, m.k)
		}
	}
	return h
}

// lexWalkParts is how many parts walk walks an index of n documents in:
// one per CPU up to 4, for an index of lexWalkSplit documents or more
// (below, a walk takes well under a millisecond).
var lexWalkParts = func(n int) int {
	if n < lexWalkSplit {
		return 1
	}
	return max(1, min(runtime.GOMAXPROCS(0), 4))
}

// lexWalkSplit is the fewest documents walk walks in parts.
const lexWalkSplit = 1 << 17

// walkTo scores the documents before end that the essential cursors
// hold, keeping the k best: a document at a time in a small index, a
// window at a time in a large one (walkWindows).
func (m *maxScore) walkTo(end uint32) {
	if !m.ix.windowed() {
		m.walkDocs(end)
	} else {
		m.walkWindows(end)
	}
}

// walkDocs is walkTo a document at a time: the next document is the
// least any essential cursor is at.
func (m *maxScore) walkDocs(end uint32) {
	for {
		doc, ok := m.next()
		if !ok || doc >= end {
			return
		}
		// a row's rowid is read only for a row that makes the k best
		// so far (or ties the worst of them): on a walk of 100k rows
		// at a million entries, reading every row's was a quarter of it
		if score, ok := m.score(doc); ok && (len(m.h) < m.k || score >= m.theta) {
			m.offer(lexHit{rowid: m.ix.rowid[doc], rank: score})
		}
	}
}

// walkWindows is walkTo a window of lexWindow documents at a time
// (as Lucene's BooleanScorer goes). Each essential cursor adds what its
// phrase gives each document it holds in the window to that document's
// sum, one cursor after the other; then the documents whose sum, with
// the most the other phrases could add, may make the k best are scored
// whole (scoreHeld), in order; the sums only bound, and a score is
// summed again in the phrases' order. A document at a time, finding the
// next was a pass over every essential cursor: a query of 30 words
// walked 394k documents of the lexicon of the million-entry bench
// repository in 62 ms, 155 ns each, and 21 ms in windows. Over 30
// queries (k=200, one part, the two walks in turn): 270 ms in all
// against 370, median 8.0 against 8.9 ms. A row the essential phrases
// hold is left out at once when what they give it, with the most the
// others give any row of the window's blocks (roomIn), cannot make the k
// best: with the most they give any row (MaxScore's bound), a prompt's
// walk at a million entries sought the inessential cursors to 114k rows
// and took 4.15 ms; now to 20k, in 3.0 ms (30 queries at k=40 and 200:
// 640 ms against 988, the same rows).
func (m *maxScore) walkWindows(end uint32) {
	ix := m.ix
	if m.win == nil {
		m.win = &lexWin{sum: make([]float64, lexWindow), held: make([]uint64, (lexWindow+63)/64),
			start: make([]int, len(m.cur)), from: make([]int, len(m.cur)), terms: make([][]float64, len(m.cur))}
	}
	w := m.win
	for {
		lo, ok := m.next()
		if !ok || lo >= end {
			return
		}
		hi := uint32(min(uint64(lo)+uint64(len(w.sum)), uint64(end)))
		// the cursors essential when the window starts stay so until it
		// ends: those that theta makes inessential meanwhile were walked
		// past the window already
		ess := m.ess
		room := m.roomIn(lo, hi, ess)
		for j := ess; j < len(m.cur); j++ {
			c := &m.cur[j]
			w.start[j], w.from[j], w.terms[j] = c.pos, c.pos, w.terms[j][:0]
			for c.at < hi {
				off := c.at - lo
				s := c.term(float64(ix.length[c.at]), m.avgdl)
				w.terms[j] = append(w.terms[j], s)
				w.held[off/64] |= 1 << (off % 64)
				w.sum[off] += s
				c.advance()
			}
		}
		for i, bits64 := range w.held[:(hi-lo+63)/64] {
			for ; bits64 != 0; bits64 &= bits64 - 1 {
				off := uint32(i*64 + bits.TrailingZeros64(bits64))
				sum := w.sum[off]
				w.sum[off] = 0
				doc := lo + off
				if len(m.h) == m.k && (sum+room[ess])*boundSlack < m.theta || ix.isDead(doc) || m.admit != nil && !admits(m.admit, ix.rowid[doc]) {
					continue
				}
				// a row's rowid is read only for a row that makes the k
				// best so far (or ties the worst of them): on a walk of
				// 100k rows at a million entries, reading every row's
				// was a quarter of it
				if score, ok := m.scoreHeld(doc, ess, sum, room); ok && (len(m.h) < m.k || score >= m.theta) {
					m.offer(lexHit{rowid: ix.rowid[doc], rank: score})
				}
			}
			w.held[i] = 0
		}
	}
}

// lexWindow is how many documents walkWindows gathers at once, and
// lexWindowFrom the fewest documents of an index walked so (variables:
// tests walk many windows over few documents). In a small index, a
// walk finds the k best among few rows, scores most of the rows it
// meets, and a document at a time took three quarters of the time (the
// lexicon of 10k entries: 0.45 against 0.60 ms a walk).
var (
	lexWindow     = 2048
	lexWindowFrom = lexWalkSplit
)

// windowed reports whether walkTo walks ix a window at a time.
func (ix *lexIndex) windowed() bool { return len(ix.rowid) >= lexWindowFrom }

// lexWin is walkWindows' window: each document's sum so far (by its offset
// in the window) and which of them any cursor holds; for each essential
// cursor, where in its postings it stood when the window started, what
// its phrase gives each of the window's postings from there (terms),
// and where the next row scored lies at the earliest (past the last).
type lexWin struct {
	sum         []float64
	held        []uint64
	start, from []int
	terms       [][]float64
}

// scoreHeld returns the score of doc, summed in the phrases' order as
// bm25() sums it, given sum, what the cursors from ess on add to it
// (walkWindows' window holds their postings), and room, the most the
// cursors before ess can add to a row of the window (roomIn); false for
// a row that cannot make the k best. It moves the cursors before ess to
// doc.
func (m *maxScore) scoreHeld(doc uint32, ess int, sum float64, room []float64) (float64, bool) {
	d := float64(m.ix.length[doc])
	sum, ok := m.addInessential(doc, ess, d, sum, room)
	if !ok {
		return 0, false
	}
	if len(m.h) == m.k && sum*boundSlack < m.theta {
		clear(m.parts)
		return 0, false
	}
	// the essential phrases' parts, as the window holds them (from where
	// the last row scored left each cursor's: rows come in order)
	w := m.win
	for j := ess; j < len(m.cur); j++ {
		c := &m.cur[j]
		i := gallop(c.docs, w.from[j], c.pos, doc)
		w.from[j] = i
		if i < c.pos && c.docs[i] == doc {
			m.parts[c.phrase] = w.terms[j][i-w.start[j]]
		}
	}
	return m.total(), true
}

// maxScore is one top: the phrases' cursors, least promising first;
// cur[:ess] are those a row cannot reach the k-th best score with alone
// (MaxScore), walked only to complete the score of a row the others hold.
type maxScore struct {
	ix     *lexIndex
	k      int
	admit  []byte
	avgdl  float64
	cur    []lexCursor
	prefix []float64 // prefix[i]: the most cur[:i] can add together
	room   []float64 // roomIn's
	ess    int
	h      lexHeap
	theta  float64 // the k-th best score so far
	parts  []float64
	win    *lexWin // walkWindows', made on its first window
}

func (ix *lexIndex) maxScore(phrases []*lexPostings, k int, admit []byte) *maxScore {
	m := &maxScore{ix: ix, k: k, admit: admit, avgdl: float64(ix.nTok) / float64(ix.nRow),
		theta: math.Inf(-1), parts: make([]float64, len(phrases))}
	for i, p := range phrases {
		if p == nil || len(p.docs) == 0 {
			continue
		}
		df := ix.liveDF(p)
		if df == 0 {
			continue
		}
		c := newLexCursor(p)
		c.phrase, c.idf = i, idf(ix.nRow, df)
		c.ub = bm25Term(c.idf, float64(p.max2)/2, float64(p.minD), m.avgdl) * boundSlack
		if ix.windowed() {
			c.bound = p.blockBounds(m.avgdl, ix.length)
		}
		m.cur = append(m.cur, c)
	}
	slices.SortStableFunc(m.cur, func(a, b lexCursor) int { return cmp.Compare(a.ub, b.ub) })
	m.prefix = make([]float64, len(m.cur)+1)
	m.room = make([]float64, len(m.cur)+1)
	for i, c := range m.cur {
		m.prefix[i+1] = m.prefix[i] + c.ub
	}
	for i := range m.prefix {
		m.prefix[i] *= boundSlack
	}
	return m
}

// next is the first document the essential cursors hold.
func (m *maxScore) next() (uint32, bool) {
	doc := firstDoc(m.cur[m.ess:])
	return doc, doc != lexNone
}

// firstDoc is the first document any of the cursors is at, lexNone when
// all are past their end.
func firstDoc(cur []lexCursor) uint32 {
	doc := uint32(lexNone)
	for i := range cur {
		doc = min(doc, cur[i].at)
	}
	return doc
}

// score moves the cursors past doc and returns its score, summed in the
// phrases' order as bm25() sums it; false for a row that is dead, not
// admitted or cannot make the k best.
func (m *maxScore) score(doc uint32) (float64, bool) {
	ix := m.ix
	skip := ix.isDead(doc) || m.admit != nil && !admits(m.admit, ix.rowid[doc])
	d := float64(ix.length[doc])
	bound := 0.0
	ess := m.cur[m.ess:]
	for i := range ess {
		c := &ess[i]
		if c.at == doc {
			if !skip {
				s := c.term(d, m.avgdl)
				m.parts[c.phrase] = s
				bound += s
			}
			c.advance()
		}
	}
	if skip {
		return 0, false
	}
	if _, ok := m.addInessential(doc, m.ess, d, bound, m.prefix); !ok {
		return 0, false
	}
	return m.total(), true
}

// addInessential moves the cursors before ess to doc (of d tokens) and
// sets their parts, adding them to sum (what the others give doc), the
// most promising first; false, with the parts cleared, as soon as what is
// left cannot lift doc into the k best. room[i] is the most cur[:i] can
// add to doc (m.prefix, or roomIn's).
func (m *maxScore) addInessential(doc uint32, ess int, d, sum float64, room []float64) (float64, bool) {
	for i := ess - 1; i >= 0; i-- {
		if len(m.h) == m.k && (sum+room[i+1])*boundSlack < m.theta {
			clear(m.parts)
			return 0, false
		}
		c := &m.cur[i]
		c.seek(doc)
		if c.at == doc {
			s := c.term(d, m.avgdl)
			m.parts[c.phrase] = s
			sum += s
		}
	}
	return sum, true
}

// roomIn returns room, where room[i] is the most the cursors cur[:i]
// before ess can add to a document from lo up to hi: each the largest
// bound (blockBounds) times its idf of the blocks of its postings that
// hold any of those documents. Windows come in order: each cursor looks
// on from the block it looked in last, or the one it stands in.
func (m *maxScore) roomIn(lo, hi uint32, ess int) []float64 {
	room := m.room
	for i := range ess {
		c := &m.cur[i]
		n := len(c.docs)
		c.blk = max(c.blk, c.pos/lexBlock)
		for c.blk*lexBlock < n && c.docs[min((c.blk+1)*lexBlock, n)-1] < lo {
			c.blk++
		}
		r := float32(0)
		for b := c.blk; b*lexBlock < n && c.docs[b*lexBlock] < hi; b++ {
			r = max(r, c.bound[b])
		}
		room[i+1] = room[i] + c.idf*float64(r)
	}
	return room
}

// total is the score of the row whose parts are set, summed in the
// phrases' order as bm25() sums them; it clears the parts.
func (m *maxScore) total() float64 {
	score := 0.0
	for i, s := range m.parts {
		score += s
		m.parts[i] = 0
	}
	return score
}

// lexSparse is how many cursors sought to an admitted row cost what
// walking one posting does. A filter that admits few rows (the commits
// among a million entries: 12k) is ranked row by row, each cursor sought
// to each admitted row, when that costs less than walking the postings:
// walking them for a search's commits (a walk MaxScore can prune little,
// the k-th best among so few rows scoring low) took 6-80 ms a query at
// a million entries, and scoring the admitted rows 0.7-3.9 ms; per
// posting walked, 40-160 ns, and per row and cursor scored, 11-16.
var lexSparse = 2

// admitCount is how many rows the set admit holds (bit rowid%8 of byte
// rowid/8); 0 for nil.
func admitCount(admit []byte) int {
	n := 0
	for len(admit) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(admit))
		admit = admit[8:]
	}
	for _, b := range admit {
		n += bits.OnesCount8(b)
	}
	return n
}

// admittedDocs returns the live documents of the n rows admit holds, in
// order, when scoring them one by one (scoreEach) costs less than walking
// m's postings; false when it does not, or admit is nil (every row).
func (ix *lexIndex) admittedDocs(m *maxScore, admit []byte, n int) ([]uint32, bool) {
	if admit == nil || len(m.cur) == 0 {
		return nil, false
	}
	walk := 0
	for _, c := range m.cur {
		walk += len(c.docs)
	}
	if n*len(m.cur) >= lexSparse*walk {
		return nil, false
	}
	docs := make([]uint32, 0, n)
	for i, b := range admit {
		for ; b != 0; b &= b - 1 {
			rowid := 8*i + bits.TrailingZeros8(b)
			if rowid < len(ix.ofRow) && ix.ofRow[rowid] != lexNone {
				docs = append(docs, ix.ofRow[rowid])
			}
		}
	}
	slices.Sort(docs) // rows written again have later documents
	return docs, true
}

// scoreEach scores those of the live documents docs (in order) that hold
// any of the phrases, as score does, and keeps the k best.
func (m *maxScore) scoreEach(docs []uint32) {
	for _, doc := range docs {
		d := float64(m.ix.length[doc])
		held := false
		for i := range m.cur {
			c := &m.cur[i]
			c.seek(doc)
			if c.at == doc {
				m.parts[c.phrase] = c.term(d, m.avgdl)
				held = true
			}
		}
		if !held {
			continue
		}
		if score := m.total(); len(m.h) < m.k || score >= m.theta {
			m.offer(lexHit{rowid: m.ix.rowid[doc], rank: score})
		}
	}
}

// admits reports whether the set admit (bit rowid%8 of byte rowid/8)
// holds rowid.
func admits(admit []byte, rowid int64) bool {
	return rowid/8 < int64(len(admit)) && admit[rowid/8]>>(rowid%8)&1 != 0
}

// offer keeps x if it is among the k best so far, and raises the bar.
func (m *maxScore) offer(x lexHit) {
	if m.h.offer(x, m.k) && len(m.h) == m.k {
		m.theta = m.h[0].rank
		for m.ess < len(m.cur) && m.prefix[m.ess+1] < m.theta {
			m.ess++
		}
	}
}

// matches reports whether more than n live rows hold any of the phrases.
func (ix *lexIndex) matches(phrases []*lexPostings, n int) bool {
	var total int64
	var cur []lexCursor
	for _, p := range phrases {
		if p != nil && len(p.docs) > 0 {
			total += ix.liveDF(p)
			cur = append(cur, newLexCursor(p))
		}
	}
	if total <= int64(n) {
		return false
	}
	seen := 0
	for {
		doc := firstDoc(cur)
		if doc == lexNone {
			return false
		}
		for i := range cur {
			if cur[i].at == doc {
				cur[i].advance()
			}
		}
		if !ix.isDead(doc) {
			if seen++; seen > n {
				return true
			}
		}
	}
}

// worse orders hits as FTS5's ORDER BY rank, rowid does, on scores
// (higher is better): a lower score, or an equal one of a later rowid.
func worse(a, b lexHit) bool { return a.rank < b.rank || a.rank == b.rank && a.rowid > b.rowid }

// lexHeap is a min-heap of the k best hits so far, the worst on top.
type lexHeap []lexHit

// offer adds x if it belongs among the best k; it reports whether it did.
func (h *lexHeap) offer(x lexHit, k int) bool {
	s := *h
	if len(s) < k {
		s = append(s, x)
		for i := len(s) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(s[i], s[p]) {
				break
			}
			s[i], s[p] = s[p], s[i]
			i = p
		}
		*h = s
		return true
	}
	if !worse(s[0], x) {
		return false
	}
	s[0] = x
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(s) && worse(s[l], s[m]) {
			m = l
		}
		if r < len(s) && worse(s[r], s[m]) {
			m = r
		}
		if m == i {
			break
		}
		s[i], s[m] = s[m], s[i]
		i = m
	}
	return true
}
