package cache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	vec "github.com/asg017/sqlite-vec-go-bindings/cgo"

	"github.com/git-synaptic/git-synaptic/notes"
)

func init() { vec.Auto() } // sqlite-vec in every connection of this process

// Vectors live in two places:
//   - vectors.db beside the cache: (model id, content hash) → float32
//     vector. It survives cache rebuilds and model switches, so neither
//     re-embeds text it has seen.
//   - the cache: vec_state (entry rowid → content hash embedded for the
//     active model) and vec_bits, a sqlite-vec table of sign bits for a
//     fast coarse KNN; candidates are re-scored with the float vectors.

// VectorsPath is the vector store for the cache at cachePath.
func VectorsPath(cachePath string) string {
	return filepath.Join(filepath.Dir(cachePath), "vectors.db")
}

// UseModel prepares the cache for vectors of model id with dim dimensions;
// switching the model drops the previous model's index (not its vectors).
func (c *Cache) UseModel(ctx context.Context, id string, dim int) error {
	if c.vecModel == id {
		return nil
	}
	if dim <= 0 || dim%8 != 0 {
		return fmt.Errorf("cache: vectors of %d dimensions: sign-bit indexing needs a multiple of 8", dim)
	}
	if !c.vsAttached {
		if _, err := c.db.ExecContext(ctx, `ATTACH DATABASE ? AS vs`, VectorsPath(c.path)); err != nil {
			return fmt.Errorf("open vector store: %w", err)
		}
		for _, q := range []string{`PRAGMA vs.journal_mode=WAL`, `PRAGMA vs.synchronous=OFF`,
			`CREATE TABLE IF NOT EXISTS vs.vectors(model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL, PRIMARY KEY(model, hash)) WITHOUT ROWID`} {
			if _, err := c.db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("vector store: %w", err)
			}
		}
		c.vsAttached = true
	}
	cur, err := c.Meta(ctx, "vec_model")
	if err != nil {
		return err
	}
	if cur != id {
		tx, err := c.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, q := range []string{`DROP TABLE IF EXISTS vec_bits`, `DELETE FROM vec_state`,
			fmt.Sprintf(`CREATE VIRTUAL TABLE vec_bits USING vec0(e bit[%d])`, dim),
			`INSERT INTO meta(key, value) VALUES('vec_model', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`} {
			var args []any
			if strings.Contains(q, "?") {
				args = []any{id}
			}
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("vector index: %w", err)
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	c.vecModel = id
	return nil
}

// PendingText is an entry whose text has no vector yet.
type PendingText struct {
	RowID int64
	Text  string
	hash  []byte
}

func textHash(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:16]
}

// PendingVectors returns up to limit entries of the active model that need
// embedding. Entries whose text was embedded before (same model, same
// text) are indexed from the vector store on the way, without the model;
// reused counts them.
func (c *Cache) PendingVectors(ctx context.Context, limit int) (pending []PendingText, reused int, err error) {
	if c.vecModel == "" {
		return nil, 0, fmt.Errorf("cache: no embedding model selected")
	}
	after := int64(0)
	for len(pending) < limit {
		rows, err := c.db.QueryContext(ctx, `SELECT e.rowid, e.content FROM entries e WHERE e.rowid > ? AND NOT EXISTS (SELECT 1 FROM vec_state s WHERE s.rowid=e.rowid) ORDER BY e.rowid LIMIT 2000`, after)
		if err != nil {
			return nil, reused, fmt.Errorf("cache: pending vectors: %w", err)
		}
		var batch []PendingText
		for rows.Next() {
			var p PendingText
			if err := rows.Scan(&p.RowID, &p.Text); err != nil {
				rows.Close()
				return nil, reused, err
			}
			p.hash = textHash(p.Text)
			batch = append(batch, p)
			after = p.RowID
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, reused, err
		}
		if len(batch) == 0 {
			break
		}
		var known []PendingText
		var knownVecs [][]float32
		for _, p := range batch {
			var blob []byte
			err := c.db.QueryRowContext(ctx, `SELECT vec FROM vs.vectors WHERE model=? AND hash=?`, c.vecModel, p.hash).Scan(&blob)
			if err == nil {
				known = append(known, p)
				knownVecs = append(knownVecs, decodeVec(blob))
			} else if len(pending) < limit {
				pending = append(pending, p)
			}
		}
		if len(known) > 0 {
			if err := c.StoreVectors(ctx, known, knownVecs); err != nil {
				return nil, reused, err
			}
			reused += len(known)
		}
	}
	return pending, reused, nil
}

// VectorCounts returns how many entries have a vector for the active
// model and how many entries there are.
func (c *Cache) VectorCounts(ctx context.Context) (have, total int, err error) {
	err = c.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vec_state), (SELECT count(*) FROM entries)`).Scan(&have, &total)
	return have, total, err
}

// StoreVectors records the vectors of items for the active model.
func (c *Cache) StoreVectors(ctx context.Context, items []PendingText, vecs [][]float32) error {
	if len(items) != len(vecs) {
		return fmt.Errorf("cache: %d vectors for %d texts", len(vecs), len(items))
	}
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	for i, p := range items {
		blob := encodeVec(vecs[i])
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vs.vectors(model, hash, vec) VALUES(?, ?, ?)`, c.vecModel, p.hash, blob); err != nil {
			return fmt.Errorf("cache: store vector: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO vec_state(rowid, hash) VALUES(?, ?)`, p.RowID, p.hash); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM vec_bits WHERE rowid=?`, p.RowID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO vec_bits(rowid, e) VALUES(?, vec_quantize_binary(?))`, p.RowID, blob); err != nil {
			return fmt.Errorf("cache: index vector: %w", err)
		}
	}
	return tx.Commit()
}

func encodeVec(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func decodeVec(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

func dot(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// vectorCandidates returns entries passing f, ranked by cosine to q:
// sign-bit KNN for candidates, then exact cosine on the float vectors.
// When the filter leaves too few of the coarse candidates, it scans the
// filtered entries exactly.
func (c *Cache) vectorCandidates(ctx context.Context, q []float32, f Filter, n int) ([]Hit, error) {
	w, args := f.where()
	coarse := max(1000, 20*n)
	var hits []Hit
	rows, err := c.db.QueryContext(ctx, `SELECT rowid FROM vec_bits WHERE e MATCH vec_quantize_binary(?) AND k = ?`, encodeVec(q), min(coarse, 4096))
	if err != nil {
		return nil, fmt.Errorf("cache: vector search: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	idJSON, _ := json.Marshal(ids)
	hits, err = c.scoreVectors(ctx, q, `e.rowid IN (SELECT value FROM json_each(?)) AND `+w, append([]any{string(idJSON)}, args...))
	if err != nil {
		return nil, err
	}
	if len(hits) < n && len(ids) >= min(coarse, 4096) {
		// a selective filter: score every entry it admits
		if hits, err = c.scoreVectors(ctx, q, w, args); err != nil {
			return nil, err
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].Cosine > hits[j].Cosine })
	if len(hits) > n {
		hits = hits[:n]
	}
	return hits, nil
}

func (c *Cache) scoreVectors(ctx context.Context, q []float32, where string, args []any) ([]Hit, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT `+rowCols+`, coalesce(a.count, 0), v.vec FROM entries e
		JOIN vec_state s ON s.rowid = e.rowid JOIN vs.vectors v ON v.model = ? AND v.hash = s.hash
		LEFT JOIN access a ON a.id = e.id WHERE `+where, append([]any{c.vecModel}, args...)...)
	if err != nil {
		return nil, fmt.Errorf("cache: vector scoring: %w", err)
	}
	defer rows.Close()
	var out []Hit
	for rows.Next() {
		var h Hit
		var blob []byte
		r, err := scanRow(rows, &h.Accesses, &blob)
		if err != nil {
			return nil, err
		}
		h.Row = r
		h.Cosine = float64(dot(q, decodeVec(blob)))
		out = append(out, h)
	}
	return out, rows.Err()
}

// Mode picks the rankers a search fuses.
type Mode string

// Search modes.
const (
	ModeHybrid Mode = "hybrid" // BM25 and vectors, fused
	ModeVector Mode = "vector" // vectors only
	ModeBM25   Mode = "bm25"   // full-text only (the lexical fallback)
)

// rrfK is reciprocal rank fusion's constant (Cormack et al., 2009).
const rrfK = 60

// vectorWeight scales the vector ranking's share of the fused score.
// USE-lite's vectors are weaker than BM25 on LoCoMo (R@10 0.39 vs 0.63);
// weighted 0.3 they still lift R@5 and R@10 over BM25 alone (make
// eval-locomo: weight 1 gave R@10 0.597, 0.5 gave 0.648, 0.3 gave 0.653).
const vectorWeight = 0.3

// SemanticQuery is a search with a query vector.
type SemanticQuery struct {
	Text   string
	Vector []float32
	Mode   Mode
	// Weights applies tier, recency, access and feedback weights to the
	// fused score (off only for retrieval benchmarks).
	Weights bool
	Now     time.Time
	// MinCosine drops results found by the vectors alone below this
	// similarity (every entry is somebody's nearest neighbour).
	MinCosine float64
}

// SemanticSearch ranks by BM25 and/or vector similarity, fused by
// reciprocal rank, then multiplied by the entry's weights.
func (c *Cache) SemanticSearch(ctx context.Context, q SemanticQuery, f Filter) ([]Hit, error) {
	lim := f.Limit
	if lim <= 0 {
		lim = 10
	}
	depth := max(50, 5*lim)
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
	if q.Mode != ModeVector {
		wf := f
		wf.Limit = depth
		lex, err := c.Search(ctx, q.Text, wf)
		if err != nil {
			return nil, err
		}
		for i, h := range lex {
			p := add(h)
			p.LexRank = i + 1
			p.Fused += 1.0 / float64(rrfK+i+1)
		}
	}
	if q.Mode != ModeBM25 {
		vh, err := c.vectorCandidates(ctx, q.Vector, f, depth)
		if err != nil {
			return nil, err
		}
		for i, h := range vh {
			if h.Cosine < q.MinCosine && byID[h.ID] == nil {
				continue
			}
			p := add(h)
			p.VecRank, p.Cosine = i+1, h.Cosine
			p.Accesses = h.Accesses
			p.Fused += vectorWeight / float64(rrfK+i+1)
		}
	}
	out := make([]Hit, 0, len(order))
	for _, id := range order {
		h := byID[id]
		h.Weight = 1
		if q.Weights {
			h.Weight = Weight(h.Row, h.Accesses, q.Now)
		}
		h.Score = h.Fused * h.Weight
		out = append(out, *h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	if len(out) > lim {
		out = out[:lim]
	}
	return out, nil
}

// Weight is the seed designs' multiplier for a result: tier (longterm
// 1.5, working 1.0, ephemeral 0.5) × recency (half-life 30 days; pinned
// entries do not decay) × access confidence (0 → 0.7, 1-2 → 1.0, 3-5 →
// 1.2, 6+ → 1.4) × relevance feedback (1 + score; irrelevant 0.33).
func Weight(r Row, accesses int, now time.Time) float64 {
	w := 1.0
	switch r.Tier {
	case notes.TierLongterm:
		w = 1.5
	case notes.TierEphemeral:
		w = 0.5
	}
	if !r.Pinned {
		age := now.Sub(r.Created).Hours() / 24
		if age > 0 {
			w *= math.Pow(0.5, age/30)
		}
	}
	switch {
	case accesses == 0:
		w *= 0.7
	case accesses <= 2:
	case accesses <= 5:
		w *= 1.2
	default:
		w *= 1.4
	}
	if r.Irrelevant {
		return w * 0.33
	}
	return w * (1 + r.Relevance)
}
