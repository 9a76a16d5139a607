package cache

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
	"github.com/git-synaptic/git-synaptic/rank"
	"github.com/git-synaptic/git-synaptic/timeexpr"
)

// Semantic search: candidates from BM25 and the vectors, scored and ordered
// by the policy in package rank.

// Mode picks the rankers a search uses (rank.Mode).
type Mode = rank.Mode

// Search modes.
const (
	ModeHybrid = rank.Hybrid // BM25 and vectors, combined
	ModeVector = rank.Vector // vectors only
	ModeBM25   = rank.BM25   // full-text only (the lexical fallback)
)

// SemanticQuery is a search with a query vector.
type SemanticQuery struct {
	Text   string
	Vector []float32
	// VectorFunc, when Vector is nil, supplies it once the lexical stage
	// has run (the caller embeds the query meanwhile).
	VectorFunc func() ([]float32, error)
	Mode       Mode
	// Weights applies tier, recency, access and feedback weights to the
	// fused score (off only for retrieval benchmarks).
	Weights bool
	Now     time.Time
	// TimeAnchor is when the query is asked, for Time (zero: Now).
	TimeAnchor time.Time
	// MinCosine drops results found by the vectors alone below this
	// similarity (every entry is somebody's nearest neighbour).
	MinCosine float64
	// Time is the time the query names, if any (rank.TimeFactor): entries
	// of that span are also gathered as candidates, and rank higher.
	Time *timeexpr.Span
	// OffLine are anchors off HEAD's line of history: their entries are
	// weighted by rank.OffLinePrior (with Weights).
	OffLine map[string]bool
}

// SemanticSearch ranks by BM25 and/or vector similarity, fused as a
// convex combination of normalised BM25 and cosine (rank.Fuser), plus
// session context in hybrid mode (addSessionContext), then multiplied by
// the entry's weights.
func (c *Cache) SemanticSearch(ctx context.Context, q SemanticQuery, f Filter) ([]Hit, error) {
	lim := f.Limit
	if lim <= 0 {
		lim = 10
	}
	order, byID, err := c.candidates(ctx, &q, f, lim)
	if err != nil {
		return nil, err
	}
	bm25s := make([]float64, len(order))
	for i, id := range order {
		bm25s[i] = byID[id].BM25
	}
	fuser := rank.NewFuser(q.Mode, q.Vector != nil, bm25s)
	for _, id := range order {
		fuser.Fuse(&byID[id].Scores)
	}
	if q.Mode != ModeVector && q.Mode != ModeBM25 && q.Vector != nil {
		if order, err = c.addSessionContext(ctx, q, f, order, byID, fuser); err != nil {
			return nil, err
		}
	}
	anchor := q.TimeAnchor
	if anchor.IsZero() {
		anchor = q.Now
	}
	out := make([]Hit, 0, len(order))
	for _, id := range order {
		h := byID[id]
		h.Weight, h.Time = 1, rank.TimeFactor(q.Time, h.Created, h.Content, anchor)
		if q.Weights {
			h.Prior = rank.Priors(h.State, h.Reads, q.Now)
			if q.OffLine[h.Anchor] {
				h.Prior.Line = rank.OffLinePrior
			}
			h.Weight = h.Prior.Weight()
		}
		h.Weight *= h.Time
		h.Score = h.Fused * h.Weight
		out = append(out, *h)
	}
	rank.Order(out, func(h *Hit) rank.Ranked {
		return rank.Ranked{Score: h.Score, Lexical: fuser.Lexical(h.Scores) * h.Weight, ID: h.ID}
	})
	return out[:min(lim, len(out))], nil
}

// candidates gathers a search's candidates in order of discovery, lane by
// lane (lanes): the top BM25 matches, then the nearest vectors (q.Vector
// is set from q.VectorFunc between the two), each with its cosine and read
// count. LexRank and VecRank are ranks within the candidate's lane.
func (c *Cache) candidates(ctx context.Context, q *SemanticQuery, f Filter, lim int) ([]string, map[string]*Hit, error) {
	byID := map[string]*Hit{}
	var order []string
	add := func(h Hit) *Hit {
		if p, ok := byID[h.ID]; ok {
			return p
		}
		byID[h.ID] = &h
		order = append(order, h.ID)
		return &h
	}
	ls := lanes(f, lim)
	c.freeRetired() // no lane of an earlier search scans them now
	// The vector lanes' sign-bit ranking (pure Go; 5 ms a lane at 300k
	// entries) runs beside the lexical lanes' SQL, once the query's
	// embedding is there.
	var vqs []*vectorQuery
	if q.Mode != ModeBM25 && (q.Vector != nil || q.VectorFunc != nil) {
		for _, l := range ls {
			vq, err := c.planNearest(ctx, l.filter, l.vectors, nearestPool(l.vectors), 0)
			if err != nil {
				return nil, nil, err
			}
			vqs = append(vqs, vq)
		}
	}
	vector := rankAside(q, vqs)
	defer vector() // whatever path this leaves by, the ranking is over
	if q.Mode != ModeVector {
		for _, l := range ls {
			lex, err := c.lexical(ctx, q.Text, l.filter, l.lexical, q.Time, len(vqs) == 0)
			if err != nil {
				return nil, nil, err
			}
			for i, h := range lex {
				p := add(h)
				p.LexRank = i + 1
			}
		}
	}
	// the BM25 candidates' vectors are read while the embedding is under way
	pre, err := c.vectorsAhead(ctx, q, order)
	if err != nil {
		return nil, nil, err
	}
	v, err := vector()
	if err != nil {
		return nil, nil, err
	}
	q.Vector = v
	if q.Mode != ModeBM25 && q.Vector != nil {
		for li, l := range ls {
			if err := c.vectorLane(ctx, q, l, vqs[li], byID, add); err != nil {
				return nil, nil, err
			}
		}
	}
	// every candidate's cosine (lexical ones too) and read count
	if err := c.completeHits(ctx, *q, order, byID, pre); err != nil {
		return nil, nil, err
	}
	return order, byID, nil
}

// vectorLane adds lane l's nearest vectors (vq, ranked) to the
// candidates byID (add), with their ranks in the lane and cosines, and
// those of the time the query names.
func (c *Cache) vectorLane(ctx context.Context, q *SemanticQuery, l lane, vq *vectorQuery, byID map[string]*Hit, add func(Hit) *Hit) error {
	vh, err := c.scoreNearest(ctx, vq, q.Vector)
	if err != nil {
		return err
	}
	for i, h := range vh {
		if h.Cosine < q.MinCosine && byID[h.ID] == nil {
			continue
		}
		p := add(h)
		p.VecRank, p.Cosine = i+1, h.Cosine
		p.Reads = h.Reads
	}
	if within, ok := narrowTo(l.filter, q.Time); ok {
		more, err := c.Nearest(ctx, q.Vector, within, 20)
		if err != nil {
			return err
		}
		for _, h := range more {
			if byID[h.ID] == nil && h.Cosine >= q.MinCosine {
				add(h) // with its cosine: completeHits need not score it again
			}
		}
	}
	return nil
}

// rankAside waits, in a goroutine, for q's vector (q.Vector, else
// q.VectorFunc's) and ranks each of vqs by it. The function it returns
// waits for that, joining the ranking's large scans meanwhile (signScan),
// and returns the vector; it may be called again.
func rankAside(q *SemanticQuery, vqs []*vectorQuery) func() ([]float32, error) {
	type result struct {
		v   []float32
		err error
	}
	done := make(chan result, 1)
	scans := make(chan *signScan, len(vqs))
	for _, vq := range vqs {
		vq.offer = func(s *signScan) {
			select {
			case scans <- s:
			default: // a scan after the ranking (coarse's): no one waits
			}
		}
	}
	v, f := q.Vector, q.VectorFunc
	go func() {
		var err error
		if v == nil && f != nil {
			v, err = f()
		}
		if err == nil && v != nil {
			for _, vq := range vqs {
				vq.rank(v)
			}
		}
		done <- result{v, err}
	}()
	var r *result
	return func() ([]float32, error) {
		for r == nil {
			select {
			case x := <-done:
				r = &x
			case s := <-scans:
				s.join()
			}
		}
		return r.v, r.err
	}
}

// lane is one kind of entry with candidate pools of its own.
type lane struct {
	filter           Filter
	lexical, vectors int // pool sizes
}

// memoryTypes are every type but indexed commits.
var memoryTypes = append(slices.Clone(memory.SavableTypes), memory.TypeNote)

// lanes splits a search into memory and indexed commits when the filter
// admits both, each with pools of its own taken before the priors apply:
// thousands of commit messages must not crowd memory out of the pools (on
// a clone of tmux/tmux, 12k commits filled the 50 best BM25 matches of a
// question that a saved issue answered). Commits weigh less afterwards
// (rank.CommitPrior), so a smaller pool of them serves.
func lanes(f Filter, lim int) []lane {
	mem := lane{filter: f, lexical: max(50, 5*lim), vectors: max(20, 2*lim)}
	if len(f.Types) > 0 && !slices.Contains(f.Types, memory.TypeGitCommit) {
		return []lane{mem}
	}
	types := memoryTypes
	if len(f.Types) > 0 {
		types = slices.DeleteFunc(slices.Clone(f.Types), func(t memory.Type) bool { return t == memory.TypeGitCommit })
		if len(types) == 0 {
			return []lane{mem} // commits only
		}
	}
	mem.filter.Types = types
	commits := lane{filter: f, lexical: max(20, 2*lim), vectors: max(10, lim)}
	commits.filter.Types = []memory.Type{memory.TypeGitCommit}
	return []lane{mem, commits}
}

// addSessionContext applies session context to the fused candidates and
// returns the order with the neighbours that joined (rank.Lenders,
// rank.Loans and rank.Lend say what is lent).
func (c *Cache) addSessionContext(ctx context.Context, q SemanticQuery, f Filter, order []string, byID map[string]*Hit, fuser rank.Fuser) ([]string, error) {
	best := rank.Lenders(order, func(id string) float64 { return byID[id].Fused })
	if len(best) == 0 {
		return order, nil
	}
	idJSON, _ := json.Marshal(best)
	rows, err := c.db.QueryContext(ctx, `SELECT c.id,
			coalesce((SELECT p.id FROM entries p WHERE p.session_id != '' AND p.session_id = c.session_id AND p.created < c.created ORDER BY p.created DESC LIMIT 1), ''),
			coalesce((SELECT n.id FROM entries n WHERE n.session_id != '' AND n.session_id = c.session_id AND n.created > c.created ORDER BY n.created LIMIT 1), '')
		FROM entries c WHERE c.id IN (SELECT value FROM json_each(?)) AND c.session_id != ''`, string(idJSON))
	if err != nil {
		return nil, fmt.Errorf("cache: session neighbours: %w", err)
	}
	defer rows.Close()
	var loans []rank.Loan
	var missing []string
	for rows.Next() {
		var id, before, after string
		if err := rows.Scan(&id, &before, &after); err != nil {
			return nil, err
		}
		for _, l := range rank.Loans(id, before, after) {
			loans = append(loans, l)
			if byID[l.To] == nil && !slices.Contains(missing, l.To) {
				missing = append(missing, l.To)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(missing) > 0 {
		w, args := f.where()
		mJSON, _ := json.Marshal(missing)
		// driven by the ids: with "e.id IN (...)" SQLite scanned every
		// entry of the filter's types (4 ms a prompt at 10k entries)
		found, err := c.queryRows(ctx, "session neighbours", `SELECT `+rowCols+` FROM json_each(?) j CROSS JOIN entries e ON e.id = j.value WHERE `+w, append([]any{string(mJSON)}, args...)...)
		if err != nil {
			return nil, err
		}
		added := make([]string, len(found))
		for i, r := range found {
			byID[r.ID] = &Hit{Row: r}
			added[i] = r.ID
		}
		if err := c.completeHits(ctx, q, added, byID, nil); err != nil {
			return nil, err
		}
		for _, id := range added {
			fuser.Fuse(&byID[id].Scores)
		}
		order = append(order, added...)
	}
	scores := make(map[string]*rank.Scores, len(order))
	for _, id := range order {
		scores[id] = &byID[id].Scores
	}
	rank.Lend(loans, scores)
	return order, nil
}

// completeHits fills in the cosine of candidates found by BM25 only and
// the read count of every candidate; pre, if not nil, holds the vectors
// of some read ahead.
func (c *Cache) completeHits(ctx context.Context, q SemanticQuery, ids []string, byID map[string]*Hit, pre *aheadVectors) error {
	if len(ids) == 0 {
		return nil
	}
	idJSON, _ := json.Marshal(ids)
	// the vector searches scored their own hits (a windowed one without a
	// rank in the main list); a real cosine is never exactly 0
	var unscored []string
	for _, id := range ids {
		if byID[id].VecRank == 0 && byID[id].Cosine == 0 {
			unscored = append(unscored, id)
		}
	}
	if q.Vector != nil && len(unscored) > 0 {
		if err := c.scoreUnscored(ctx, q.Vector, pre.score(q.Vector, unscored, byID), byID); err != nil {
			return err
		}
	}
	rows, err := c.db.QueryContext(ctx, `SELECT id, reads FROM access WHERE id IN (SELECT value FROM json_each(?))`, string(idJSON))
	if err != nil {
		return fmt.Errorf("cache: read counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		byID[id].Reads = n
	}
	return rows.Err()
}

// aheadVectors are the vectors of some candidates, by entry id
// (heldVectorsOfIDs): read before the query vector is there
// (vectorsAhead), or once it is (scoreUnscored).
type aheadVectors struct {
	asked map[string]bool      // the candidates looked up
	vec   map[string][]float32 // those with a vector of the active model
}

// vectorsAhead reads the vectors of the candidates ids, in a cache that
// holds vectors, for a search that will have a query vector: the SQL that
// scoreUnscored would run once the vector is there (0.4 ms of a prompt's
// 8 at 10k entries) runs beside the embedding instead. nil otherwise.
func (c *Cache) vectorsAhead(ctx context.Context, q *SemanticQuery, ids []string) (*aheadVectors, error) {
	h := c.holding()
	if h == nil || len(ids) == 0 || q.Mode == ModeBM25 || (q.Vector == nil && q.VectorFunc == nil) {
		return nil, nil
	}
	return c.heldVectorsOfIDs(ctx, h, ids)
}

// heldVectorsOfIDs reads the vectors of the entries ids from those h
// holds, or from the store (heldVectorsOf).
func (c *Cache) heldVectorsOfIDs(ctx context.Context, h *heldVectors, ids []string) (*aheadVectors, error) {
	idJSON, _ := json.Marshal(ids)
	found, err := c.heldVectorsOf(ctx, h, `SELECT e.rowid, e.id, s.hash FROM json_each(?) j CROSS JOIN entries e JOIN vec_state s ON s.rowid = e.rowid
		WHERE e.id = j.value`, string(idJSON))
	if err != nil {
		return nil, err
	}
	a := &aheadVectors{asked: make(map[string]bool, len(ids)), vec: make(map[string][]float32, len(found))}
	for _, id := range ids {
		a.asked[id] = true
	}
	for _, f := range found {
		a.vec[f.id] = f.vec
	}
	return a, nil
}

// score sets the cosine with q of the hits of ids whose vectors a read
// ahead, and returns the ids it did not look up.
func (a *aheadVectors) score(q []float32, ids []string, byID map[string]*Hit) []string {
	if a == nil {
		return ids
	}
	var rest []string
	for _, id := range ids {
		switch v, ok := a.vec[id]; {
		case ok:
			byID[id].Cosine = float64(dot(q, v))
		case !a.asked[id]:
			rest = append(rest, id)
		}
	}
	return rest
}

// scoreUnscored sets the cosine with q of the hits of ids (found by BM25
// only), from the vectors the cache holds when it holds some, else
// through SQL.
func (c *Cache) scoreUnscored(ctx context.Context, q []float32, ids []string, byID map[string]*Hit) error {
	if len(ids) == 0 {
		return nil
	}
	if h := c.holding(); h != nil {
		held, err := c.heldVectorsOfIDs(ctx, h, ids)
		if err != nil {
			return err
		}
		held.score(q, ids, byID)
		return nil
	}
	idJSON, _ := json.Marshal(ids)
	rows, err := c.db.QueryContext(ctx, `SELECT e.id, v.vec FROM entries e `+vectorJoin+`
		WHERE e.id IN (SELECT value FROM json_each(?)) AND v.model = ?`, string(idJSON), c.vecModel)
	if err != nil {
		return fmt.Errorf("cache: vector scoring: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var blob []byte
		if err := rows.Scan(&id, &blob); err != nil {
			return err
		}
		byID[id].Cosine = float64(dotBlob(q, blob))
	}
	return rows.Err()
}

// lexical is the best n BM25 matches under f, plus, when the query names
// a time span, the best 20 of that span, in BM25 order (raw bm25 values
// of one query compare across filters); alone as search takes it.
func (c *Cache) lexical(ctx context.Context, text string, f Filter, n int, span *timeexpr.Span, alone bool) ([]Hit, error) {
	wide := f
	wide.Limit = n
	hits, err := c.search(ctx, text, wide, alone)
	within, ok := narrowTo(f, span)
	if err != nil || !ok {
		return hits, err
	}
	within.Limit = 20
	more, err := c.search(ctx, text, within, alone)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(hits))
	for _, h := range hits {
		seen[h.ID] = true
	}
	for _, h := range more {
		if !seen[h.ID] {
			hits = append(hits, h)
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].BM25 < hits[j].BM25 })
	return hits, nil
}

// narrowTo is f narrowed to a time span and the days after it when
// entries may still refer to it (rank.TimeReach); false when there is no
// span to narrow to ("recently" is a preference, not a span).
func narrowTo(f Filter, span *timeexpr.Span) (Filter, bool) {
	if span == nil || span.Recent {
		return f, false
	}
	if f.Since.Before(span.From) {
		f.Since = span.From
	}
	if reach := span.To.Add(rank.TimeReach); f.Until.IsZero() || f.Until.After(reach) {
		f.Until = reach
	}
	return f, true
}
