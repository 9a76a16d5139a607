package cache

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// A search scores a few hundred candidates exactly by their float vectors
// (coarse, completeHits). Read through SQL, each costs a descent in the
// entries, in vec_state and in the vector store, 2 KB read and copied:
// about 3 ms a search at 10k entries, a third of a warm prompt hook's
// work. A long-lived process (HoldVectors) keeps the
// vectors it read in memory, by their text's hash: a (model, hash) names
// one vector for good, so what it holds is never stale, and it scores
// with the very bytes a command run in place reads, so that results are
// the same either way.

// heldVectors are the float vectors a Cache keeps, decoded from the
// store's bytes (decodeVec: the same float32 values), by text hash, for
// model.
type heldVectors struct {
	model string
	made  string // vec_made when filled: a store made again starts afresh
	max   int    // bytes of vectors at most
	bytes int    // bytes of vectors held
	byKey map[string][]float32
	// keyOf is the text hash of each row's vector, as heldVectorsOf read
	// it, while lex_log says the row is unchanged (followRows).
	keyOf map[int64]string
}

// HoldVectors makes the cache keep up to maxBytes of the float vectors
// searches read, for the many searches of a long-lived process; 0 turns
// it off. A command run once gains nothing from it.
func (c *Cache) HoldVectors(maxBytes int) {
	if maxBytes <= 0 {
		c.held, c.rows = nil, nil
		return
	}
	c.held, c.rows = &heldVectors{max: maxBytes}, &heldRows{seq: -1}
}

// holding returns the held vectors for the active model and vector
// store (as the sign bits were last read), emptied if either changed;
// nil when the cache holds none.
func (c *Cache) holding() *heldVectors {
	h := c.held
	if h == nil || c.signs == nil {
		return nil
	}
	if h.model != c.vecModel || h.made != c.signs.made || h.byKey == nil {
		h.model, h.made, h.bytes, h.byKey, h.keyOf = c.vecModel, c.signs.made, 0, map[string][]float32{}, map[int64]string{}
	}
	return h
}

// put keeps v under key, first letting go of about an eighth of what it
// holds (whatever map order gives) when it would hold more than max.
func (h *heldVectors) put(key string, v []float32) {
	if h.bytes+4*len(v) > h.max {
		drop := max(1, len(h.byKey)/8)
		for k, held := range h.byKey {
			delete(h.byKey, k)
			h.bytes -= 4 * len(held)
			if drop--; drop == 0 {
				break
			}
		}
	}
	h.byKey[key] = v
	h.bytes += 4 * len(v)
}

// heldVector is a row's float vector as heldVectorsOf finds it.
type heldVector struct {
	rowid int64
	id    string
	key   string // the text's hash
	vec   []float32
}

// heldVectorsOf reads the vectors of the rows where admits, with their
// text hashes, from SQL: from memory, or, for those it does not hold yet,
// from the store in one query, which it then holds. Rows without a vector
// of the active model are left out, as cosines does.
func (c *Cache) heldVectorsOf(ctx context.Context, h *heldVectors, from, where string, args []any) ([]heldVector, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT e.rowid, e.id, s.hash FROM `+from+` entries e JOIN vec_state s ON s.rowid = e.rowid
		WHERE `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: vector scoring: %w", err)
	}
	defer rows.Close()
	type row struct {
		rowid int64
		id    string
		key   string
	}
	var all []row
	var missing []string
	for rows.Next() {
		var r row
		var hash []byte
		if err := rows.Scan(&r.rowid, &r.id, &hash); err != nil {
			return nil, err
		}
		r.key = string(hash)
		if _, ok := h.byKey[r.key]; !ok {
			missing = append(missing, hex.EncodeToString(hash))
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	fetched, err := c.vectorsByHashes(ctx, missing)
	if err != nil {
		return nil, fmt.Errorf("cache: vector scoring: %w", err)
	}
	decoded := make(map[string][]float32, len(fetched))
	for key, blob := range fetched {
		decoded[key] = decodeVec(blob)
	}
	out := make([]heldVector, 0, len(all))
	for _, r := range all {
		v, ok := h.byKey[r.key]
		if !ok {
			if v, ok = decoded[r.key]; !ok {
				continue // no vector of this model (yet)
			}
		}
		out = append(out, heldVector{r.rowid, r.id, r.key, v})
	}
	for key, v := range decoded { // kept only now: keeping may let go of others
		h.put(key, v)
	}
	return out, nil
}

// vectorsByHashes reads the active model's vectors of the texts with the
// hex-encoded hashes, by (raw) hash.
func (c *Cache) vectorsByHashes(ctx context.Context, hashes []string) (map[string][]byte, error) {
	if len(hashes) == 0 {
		return nil, nil
	}
	list, _ := json.Marshal(hashes)
	rows, err := c.db.QueryContext(ctx, `SELECT hash, vec FROM vs.vectors WHERE model = ? AND hash IN (SELECT unhex(value) FROM json_each(?))`, c.vecModel, string(list))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make(map[string][]byte, len(hashes))
	for rows.Next() {
		var h, blob []byte
		if err := rows.Scan(&h, &blob); err != nil {
			return nil, err
		}
		out[string(h)] = blob
	}
	return out, rows.Err()
}
