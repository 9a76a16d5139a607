package cache

import (
	"context"
	"database/sql"
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
	c.retire()
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

// heldVectorsOf reads the vectors of the rows query names (its rowid, id
// and text hash: vec_state's), from memory, or, for those it does not hold
// yet, from the store, which it then holds. Rows without a vector of the
// active model are left out, as cosines does.
func (c *Cache) heldVectorsOf(ctx context.Context, h *heldVectors, query string, args ...any) ([]heldVector, error) {
	rows, err := c.db.QueryContext(ctx, query, args...)
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
			missing = append(missing, r.key)
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	rows.Close()
	fetched, err := c.vectorsBeside(ctx, missing)
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
// (raw) hashes, by hash.
func (c *Cache) vectorsByHashes(ctx context.Context, hashes []string) (map[string][]byte, error) {
	return readVectors(ctx, c.db, "vs.vecs", c.vecModel, hashes)
}

// vectorsBeside is vectorsByHashes reading half of many hashes on a
// second connection to the store (vectorsAside) while this one reads the
// other half. A lookup in the store reads a page of its index and one of
// its table (vectorsSchema): 200 took 5-8 ms at a million vectors with
// both in the kernel's page cache, and 45 ms with neither (the exact
// scores of a search's vector lane). What the second
// connection does not find is asked here again, so that a store it
// opened before the store was made again costs time, never vectors.
func (c *Cache) vectorsBeside(ctx context.Context, hashes []string) (map[string][]byte, error) {
	if len(hashes) < splitVectors {
		return c.vectorsByHashes(ctx, hashes)
	}
	aside := c.vectorsAside()
	if aside == nil {
		return c.vectorsByHashes(ctx, hashes)
	}
	first, second := hashes[:len(hashes)/2], hashes[len(hashes)/2:]
	type result struct {
		m   map[string][]byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := readVectors(ctx, aside, "vecs", c.vecModel, first)
		done <- result{m, err}
	}()
	out, err := c.vectorsByHashes(ctx, second)
	r := <-done // waited for on every path: nothing reads aside after this returns
	if err != nil {
		return nil, err
	}
	var again []string
	for _, h := range first {
		if v, ok := r.m[h]; ok && r.err == nil {
			out[h] = v
		} else {
			again = append(again, h)
		}
	}
	more, err := c.vectorsByHashes(ctx, again)
	for k, v := range more {
		out[k] = v
	}
	return out, err
}

// splitVectors is how many vectors vectorsBeside reads before it reads
// them in two halves: opening the second connection costs about a
// millisecond, once, and a query on it about 0.1 ms.
const splitVectors = 32

// vectorsAside returns the cache's second connection to the vector
// store, opened on first use; nil when it cannot be opened. It only
// reads, keeps a small page cache of its own (the interior pages it
// walks are in the kernel's page cache) and does not map the file, whose
// pages would count twice in the process's resident set.
func (c *Cache) vectorsAside() *sql.DB {
	if c.aside == nil && c.vsAttached {
		dsn := fmt.Sprintf("file:%s?mode=rw&_busy_timeout=%d&_query_only=true&_cache_size=-%d", VectorsPath(c.path), c.busy.Milliseconds(), asideKiB)
		db, err := sql.Open("sqlite3", dsn)
		if err != nil {
			return nil
		}
		db.SetMaxOpenConns(1)
		db.SetMaxIdleConns(1)
		db.SetConnMaxLifetime(0)
		c.aside = db
	}
	return c.aside
}

// asideKiB is the page cache of the second connection to the store.
const asideKiB = 8 << 10

// readVectors reads from the vectors table (of q's main or attached
// store) the vectors of model for the (raw) hashes, by hash.
func readVectors(ctx context.Context, q querier, table, model string, hashes []string) (map[string][]byte, error) {
	if len(hashes) == 0 {
		return map[string][]byte{}, nil
	}
	hexes := make([]string, len(hashes))
	for i, h := range hashes {
		hexes[i] = hex.EncodeToString([]byte(h))
	}
	list, _ := json.Marshal(hexes)
	rows, err := q.QueryContext(ctx, `SELECT hash, vec FROM `+table+` WHERE model = ? AND hash IN (SELECT unhex(value) FROM json_each(?))`, model, string(list))
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
