package cache

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/git-synaptic/git-synaptic/rank"
)

// Nearest returns the n entries f admits most similar to q, with their
// cosine similarity: sign-bit KNN for candidates, exact cosine on the
// float vectors of the nearest of them by their bits (exactPool), and
// only then the rows of the best n. When too few of the candidates have
// float vectors (stale sign bits), it scores every entry the filter
// admits.
func (c *Cache) Nearest(ctx context.Context, q []float32, f Filter, n int) ([]Hit, error) {
	return c.nearest(ctx, func() ([]float32, error) { return q, nil }, f, n, nearestPool(n), 0)
}

// NearestAlike is Nearest for what says nearly the same as the query
// vector gives: the entries f admits within cosine minCos of it (a
// near-duplicate's 0.9), at most n, nearest first. Such entries lie among
// the first few of the sign-bit ranking, so it scores at most alikePool×n
// of them exactly where Nearest scores 40 or more, and only those whose
// two bits a dimension may lie that near (alikeSlack): that scoring reads
// the float vectors from a store far larger than memory, at random.
//
// vector is called once the SQL that needs no query vector is done (3 ms
// of an MCP save at a million entries, after a save changed the table),
// so that an embedding under way meanwhile hides it.
func (c *Cache) NearestAlike(ctx context.Context, vector func() ([]float32, error), f Filter, n int, minCos float64) ([]Hit, error) {
	return c.nearest(ctx, vector, f, n, alikePool*n, max(minCos, math.SmallestNonzeroFloat64)) // above 0: alike
}

// alikePool is how many candidates per hit NearestAlike scores exactly.
const alikePool = 4

// A row near a query keeps most of its cosine with it in its two-bit
// cosine (twoBitCosine, over the query's norm): about the share the
// query keeps of itself, read from its own two bits. Over the 5,615
// candidates at cosine 0.8 or more of 900 near-duplicate checks in the
// make bench repository of a million entries (300 entries' own texts,
// the same texts with a word changed, and 300 texts of two commit
// messages' words mixed), the queries kept 0.949 to 0.985 of themselves
// (median 0.967), and the candidates 0.927 to 0.991 of their cosines
// (median 0.960): never less than their query's own share minus 0.031.
// So NearestAlike scores no row whose two-bit cosine is under minCos
// times the query's own share minus alikeSlack (about 0.80 for a
// near-duplicate's 0.9): the mixed texts, most like a new entry, had 0
// to 20 such rows each where it scored 20, whose reads from the vector
// store took 3.2 ms of an MCP save at a million entries (traced, medians
// of 60). Where the query keeps less than alikeSelfMin of itself (a model
// whose vectors two bits do not hold), no row is left out.
const (
	alikeSlack   = 0.07
	alikeSelfMin = 0.9
)

// nearestPool is how many candidates Nearest ranks by their bits for n
// hits (signIndex.nearest: the Hamming distance keeps rerankPool times
// as many).
func nearestPool(n int) int { return min(max(200, 4*n), 4096) }

// exactPool is how many of those Nearest scores by their float vectors,
// which come from a store far larger than memory: a read of the store's
// pages each, at random. Ordered by their magnitude bits as well as their
// signs, the first 40 hold what the first 200 held by their signs alone
// (recall@10 of the vector stage 0.993 against 0.987 at a million
// entries; magCut).
func exactPool(n int) int { return min(max(40, 2*n), nearestPool(n)) }

// nearest is Nearest ranking k candidates by their bits (and scoring the
// first vectorQuery.exact of them by their vectors), for the query vector
// gives once the plan is made; with minCos above 0, only what lies within
// that cosine of the query counts (vectorQuery.alike).
func (c *Cache) nearest(ctx context.Context, vector func() ([]float32, error), f Filter, n, k int, minCos float64) ([]Hit, error) {
	c.freeRetired()
	vq, err := c.planNearest(ctx, f, n, k, minCos)
	if err != nil {
		return nil, err
	}
	q, err := vector()
	if err != nil {
		return nil, err
	}
	vq.offer = spreadScan // nothing runs beside it, as a search's BM25 lane does
	vq.rank(q)
	return c.scoreNearest(ctx, vq, q)
}

// vectorQuery is one Nearest in three steps: planNearest (SQL that needs
// no query vector), rank (the sign bits alone, pure Go, so that it may run
// while the connection serves another query) and scoreNearest (SQL).
type vectorQuery struct {
	f      Filter
	n, k   int             // the hits asked for; the candidates ranked by bits (nearestPool)
	none   bool            // no entry of the filter's types: nothing to find
	ix     *signIndex      // the sign bits when planned
	key    string          // the filter in c.admits
	admit  []uint64        // the rows it admits; nil when it admits most (sampleShare) of a small index, or alike
	held   []uint64        // the rows it admits, in a cache that holds vectors (heldAdmits)
	share  float64         // about what share of the ranked rows it admits
	ranked []int64         // rank's answer, best first
	offer  func(*signScan) // who else may scan (signScan); nil: no one
	// minCos, above 0: only rows within that cosine of the query count
	// (NearestAlike; vectorQuery.alike)
	minCos float64
	// layout holds the rows not archived side by side, and view those
	// the filter admits, for a large index's scan (liveLayout); nil: the
	// index is scanned
	layout *liveLayout
	view   *layoutView
}

// planNearest reads what a Nearest needs before its query vector: whether
// any entry has the filter's types, the sign bits, and how the filter is
// applied to them (coarse). A large index (layoutMin) is ranked among the
// rows the filter admits, through the layout of the rows not archived in
// a cache that holds vectors; a near-duplicate check (alike), which
// wants only what lies very near, ranks every row of an index when the
// filter admits most, and leaves out those it rejects afterwards.
func (c *Cache) planNearest(ctx context.Context, f Filter, n, k int, minCos float64) (*vectorQuery, error) {
	vq := &vectorQuery{f: f, n: n, k: k, minCos: minCos}
	// none of these types at all (commits in a repository that never
	// indexed them): no KNN, no scan
	some, err := c.anyOf(ctx, f.Types)
	if err != nil || !some {
		vq.none = true
		return vq, err
	}
	if err := c.loadSigns(ctx); err != nil {
		return nil, err
	}
	vq.ix = c.signs
	aw, aargs := f.admitting()
	if vq.held, err = c.heldAdmits(ctx, aw, aargs); err != nil {
		return nil, err
	}
	share, key, err := c.sampleShare(ctx, aw, aargs, vq.held)
	if err != nil {
		return nil, err
	}
	vq.key, vq.share = key, share
	few, large := share < minShare, !vq.alike() && vq.ix.rows() >= layoutMin
	if few || large {
		vq.admit = vq.held
		if vq.admit == nil {
			if vq.admit, err = c.admitted(ctx, key, aw, aargs); err != nil {
				return nil, err
			}
		}
		vq.share = 1 // it ranks only the rows admitted
	}
	if large && !few && vq.held != nil && !f.IncludeArchived && !f.OnlyArchived {
		vq.layout, vq.view, err = c.layoutFor(ctx, key, vq.held)
	}
	return vq, err
}

// alike reports whether only what lies very near the query counts (a
// near-duplicate check), and a large index is read first by its rows'
// first words (headFirst).
func (vq *vectorQuery) alike() bool { return vq.minCos > 0 }

// exact is how many of the ranked rows coarse scores by their float
// vectors: exactPool, or a near-duplicate check's k, already as few.
func (vq *vectorQuery) exact() int {
	if vq.alike() {
		return vq.k
	}
	return min(vq.k, exactPool(vq.n))
}

// rank ranks the rows by their sign bits (signIndex.nearest). It reads
// only what planNearest gathered.
func (vq *vectorQuery) rank(q []float32) {
	if vq.none || len(q) == 0 || (len(q)+7)/8 != vq.ix.width { // quantize's length
		return
	}
	if vq.layout != nil {
		vq.ranked = vq.ix.rerank(q, vq.layout.hamming(q, rerankPool*vq.k, vq.view, vq.admit, vq.offer))
		return
	}
	vq.ranked = vq.ix.nearest(q, vq.k, vq.admit, vq.offer, vq.alike())
}

// scoreNearest scores the ranked rows exactly (coarse) and returns the
// best vq.n.
func (c *Cache) scoreNearest(ctx context.Context, vq *vectorQuery, q []float32) ([]Hit, error) {
	if vq.none {
		return nil, nil
	}
	scored, whole, err := c.coarse(ctx, vq, q)
	if err != nil {
		return nil, err
	}
	if len(scored) < vq.n && !whole {
		w, args := vq.f.where()
		if scored, err = c.cosines(ctx, q, "", w, args); err != nil {
			return nil, err
		}
	}
	if vq.alike() { // only the rows that count are read
		scored = slices.DeleteFunc(scored, func(s scoredRow) bool { return float64(s.cos) < vq.minCos })
	}
	return c.best(ctx, scored, vq.n)
}

// NearestExact is Nearest without its candidate stage: every entry f
// admits scored by its float vector. It is the reference the vector
// stage's recall is measured against (make bench BENCH=1M), far too slow
// for a search of a large memory.
func (c *Cache) NearestExact(ctx context.Context, q []float32, f Filter, n int) ([]Hit, error) {
	w, args := f.where()
	scored, err := c.cosines(ctx, q, "", w, args)
	if err != nil {
		return nil, err
	}
	return c.best(ctx, scored, n)
}

// best returns the rows of the n best scored, best first.
func (c *Cache) best(ctx context.Context, scored []scoredRow, n int) ([]Hit, error) {
	sort.SliceStable(scored, func(i, j int) bool { return scored[i].cos > scored[j].cos })
	if len(scored) > n {
		scored = scored[:n]
	}
	best := make([]int64, len(scored))
	for i, s := range scored {
		best[i] = s.rowid
	}
	byRow, err := c.rowsByRowid(ctx, best)
	if err != nil {
		return nil, err
	}
	hits := make([]Hit, 0, len(scored))
	for _, s := range scored {
		if r, ok := byRow[s.rowid]; ok {
			hits = append(hits, Hit{Row: r, Scores: rank.Scores{Cosine: float64(s.cos)}})
		}
	}
	return hits, nil
}

type scoredRow struct {
	rowid int64
	cos   float32
}

// vectorJoin joins entries e to their float vectors v (v.model = the
// active model must be in the WHERE clause).
const vectorJoin = `JOIN vec_state s ON s.rowid = e.rowid JOIN vs.vecs v ON v.hash = s.hash`

// cosines scores the entries matching where by their float vectors. from,
// if set, is a table joined before entries that drives the loop (the
// candidate rowids), so that SQLite looks them up instead of scanning.
func (c *Cache) cosines(ctx context.Context, q []float32, from, where string, args []any) ([]scoredRow, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT e.rowid, v.vec FROM `+from+` entries e `+vectorJoin+`
		WHERE `+where+` AND v.model = ?`, append(args[:len(args):len(args)], c.vecModel)...)
	if err != nil {
		return nil, fmt.Errorf("cache: vector scoring: %w", err)
	}
	defer rows.Close()
	var out []scoredRow
	var blob sql.RawBytes // scored at once: no copy of each vector
	for rows.Next() {
		var s scoredRow
		if err := rows.Scan(&s.rowid, &blob); err != nil {
			return nil, err
		}
		s.cos = dotBlob(q, blob)
		out = append(out, s)
	}
	return out, rows.Err()
}

// cosinesOf scores the rows among ids that where admits, in the order of
// ids. (A cache that holds vectors scores with heldInOrder instead.)
func (c *Cache) cosinesOf(ctx context.Context, q []float32, ids []int64, where string, args []any) ([]scoredRow, error) {
	idJSON, _ := json.Marshal(ids)
	scored, err := c.cosines(ctx, q, `json_each(?) j CROSS JOIN`, `e.rowid = j.value AND `+where, append([]any{string(idJSON)}, args...))
	if err != nil {
		return nil, err
	}
	cos := make(map[int64]float32, len(scored))
	for _, s := range scored {
		cos[s.rowid] = s.cos
	}
	scored = scored[:0]
	for _, id := range ids {
		if v, ok := cos[id]; ok {
			scored = append(scored, scoredRow{id, v})
		}
	}
	return scored, nil
}

// dotBlob is the dot product of q with a little-endian float32 blob.
func dotBlob(q []float32, b []byte) float32 {
	if len(b) != 4*len(q) {
		return 0
	}
	var s float32
	for i := range q {
		s += q[i] * math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return s
}

// dot is dotBlob of the blob v was decoded from: the same products summed
// in the same order, so the same float32.
func dot(q, v []float32) float32 {
	if len(v) != len(q) {
		return 0
	}
	var s float32
	for i := range q {
		s += q[i] * v[i]
	}
	return s
}
