package cache

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
)

func init() { vec.Auto() } // sqlite-vec in every connection of this process

// Vectors live in two places:
//   - vectors.db beside the cache: (model id, content hash) → float32
//     vector. It survives cache rebuilds and model switches, so neither
//     re-embeds text it has seen.
//   - the cache: vec_state (entry rowid → content hash embedded for the
//     active model) and vec_bits, a sqlite-vec table of each vector's
//     sign bits (e) and magnitude bits (m, magnitudeBits) for a fast
//     coarse KNN; candidates are re-scored with the float vectors.

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
	created := false
	if !c.vsAttached {
		var err error
		// derived data like the cache: a damaged store starts again
		created, err = c.attachVectors(ctx, true)
		if err != nil {
			return fmt.Errorf("open vector store %s: %w", VectorsPath(c.path), err)
		}
		c.vsAttached = true
	}
	cur, err := c.Meta(ctx, "vec_model")
	if err != nil {
		return err
	}
	if cur != id || created { // a new vector store: the index points nowhere
		tx, err := c.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		defer tx.Rollback()
		for _, q := range []string{unindexVectors,
			fmt.Sprintf(`CREATE VIRTUAL TABLE vec_bits USING vec0(e bit[%d], m bit[%d])`, dim, dim),
			`INSERT INTO meta(key, value) VALUES('vec_model', ?) ON CONFLICT(key) DO UPDATE SET value=excluded.value`, bumpGen, bumpMade} {
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

// unindexVectors drops the vector index and has every entry wait for its
// vector again (UseModel makes the index anew).
const unindexVectors = `DROP TABLE IF EXISTS vec_bits; DELETE FROM vec_state; INSERT OR IGNORE INTO vec_pending(rowid) SELECT rowid FROM entries;`

// bumpMade marks the vector index made again: it numbers its chunks from
// 1 again, so processes holding its chunks read them all again (signs.go).
const bumpMade = `INSERT INTO meta(key, value) VALUES('vec_made', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

// bumpGen marks the vector index changed (signs.go reads it again).
const bumpGen = `INSERT INTO meta(key, value) VALUES('vec_gen', '1') ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1`

// UseStoredModel selects the model the stored vectors were last computed
// with, to read them (VectorRows) without loading the model. It reports
// false when there are no stored vectors.
func (c *Cache) UseStoredModel(ctx context.Context) (bool, error) {
	if c.vecModel != "" {
		return true, nil
	}
	if _, err := os.Stat(VectorsPath(c.path)); err != nil {
		return false, nil
	}
	id, err := c.Meta(ctx, "vec_model")
	if err != nil || id == "" {
		return false, err
	}
	if !c.vsAttached {
		if _, err := c.attachVectors(ctx, false); err != nil {
			return false, fmt.Errorf("open vector store %s: %w", VectorsPath(c.path), err)
		}
		c.vsAttached = true
	}
	c.vecModel = id
	return true, nil
}

// VectorModel is the id of the model whose vectors the cache reads (set
// by UseModel or UseStoredModel), or "".
func (c *Cache) VectorModel() string { return c.vecModel }

// vectorsSchema is the vector store's table, created in the attached
// "vs": the rows in the order they were stored, found by their key
// through an index of its own. The store's first table, vectors, was
// keyed by (model, hash) WITHOUT ROWID: a B-tree whose interior pages
// hold whole rows (six or seven of 2 KB vectors to a 16 KB page), seven
// levels deep at a million vectors; looking up 200 took 6-7 ms in the
// sqlite3 shell, against 3-4 ms here, where the index's entries are 45
// bytes and the table's interior ones a rowid (moveVectors).
const vectorsSchema = `CREATE TABLE IF NOT EXISTS vs.vecs(id INTEGER PRIMARY KEY, model TEXT NOT NULL, hash BLOB NOT NULL, vec BLOB NOT NULL);
	CREATE UNIQUE INDEX IF NOT EXISTS vs.vecs_key ON vecs(model, hash)`

// attachVectors attaches the vector store as "vs", made if there is none
// (and, with restart, made again if SQLite cannot read it), and moves the
// vectors of its first table into vecs (moveVectors). It reports whether
// the store is new: none of its vectors were there before.
func (c *Cache) attachVectors(ctx context.Context, restart bool) (created bool, err error) {
	attach := attachStore
	if restart {
		attach = attachOrRestart // derived data like the cache: a damaged store starts again
	}
	if created, err = attach(ctx, c.db, "vs", VectorsPath(c.path), "vecs", vectorsSchema); err != nil {
		return false, err
	}
	var first int
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM vs.sqlite_master WHERE name = 'vectors'`).Scan(&first); err != nil {
		return false, err
	}
	if first == 0 {
		return created, nil
	}
	return false, c.moveVectors(ctx)
}

// NoticeMoves has f told how a move of the vector store's first table
// (moveVectors) goes, if one is needed: every 200k vectors moved, and
// when it is over, the vectors moved so far and how long that took.
func (c *Cache) NoticeMoves(f func(moved int, done bool, took time.Duration)) { c.notice = f }

// moveBatch is how many vectors moveVectors moves in one transaction.
var moveBatch = 20000

// moveVectors moves the vectors of the store's first table (vectors,
// vectorsSchema) into vecs, moveBatch at a time in key order, each batch
// inserted and deleted in one transaction: a process killed midway
// leaves every vector in one table or the other, and the next process
// to attach the store goes on. Processes that attach meanwhile wait or
// move batches themselves; none reads the store before the first table
// is empty. A million vectors took 26 s (20 s in the sqlite3 shell), the
// file no larger (the pages each batch frees are those the next one
// writes). The first table
// stays, empty: a process of an older version that holds it reads it,
// and finds nothing; what such a process stores there is moved by the
// next process of this version to attach the store.
func (c *Cache) moveVectors(ctx context.Context) error {
	var some bool
	if err := c.db.QueryRowContext(ctx, `SELECT EXISTS(SELECT 1 FROM vs.vectors)`).Scan(&some); err != nil || !some {
		return err
	}
	start, moved := time.Now(), 0
	for {
		tx, err := c.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("move the stored vectors: %w", err)
		}
		n, err := moveBatchIn(ctx, tx)
		if err == nil {
			err = tx.Commit()
		}
		tx.Rollback()
		if err != nil {
			return fmt.Errorf("move the stored vectors: %w", err)
		}
		moved += n
		if c.notice != nil && moved > 0 && (n < moveBatch || moved%(10*moveBatch) == 0) {
			c.notice(moved, n < moveBatch, time.Since(start))
		}
		if n < moveBatch {
			return nil
		}
	}
}

// moveBatchIn moves the first moveBatch vectors of the first table in
// key order into vecs, in tx; it returns how many it moved. A vector vecs
// has already (stored since by this version) is kept.
func moveBatchIn(ctx context.Context, tx *sql.Tx) (int, error) {
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO vs.vecs(model, hash, vec) SELECT model, hash, vec FROM vs.vectors ORDER BY model, hash LIMIT ?`, moveBatch); err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `DELETE FROM vs.vectors WHERE (model, hash) IN (SELECT model, hash FROM vs.vectors ORDER BY model, hash LIMIT ?)`, moveBatch)
	if err != nil {
		return 0, err
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// PendingText is an entry whose text has no vector yet.
type PendingText struct {
	RowID int64
	Text  string
	hash  []byte
	saved bool // the vector store has it already: only the index needs it
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
	return c.pendingVectors(ctx, limit, false)
}

// pendingVectors reuses stored vectors and returns up to limit texts that
// need embedding; with all, it goes through every pending entry.
func (c *Cache) pendingVectors(ctx context.Context, limit int, all bool) (pending []PendingText, reused int, err error) {
	if c.vecModel == "" {
		return nil, 0, fmt.Errorf("cache: no embedding model selected")
	}
	after := int64(0)
	for all || len(pending) < limit {
		batch, err := c.waitingAfter(ctx, after, 2000)
		if err != nil {
			return nil, reused, err
		}
		if len(batch) == 0 {
			break
		}
		after = batch[len(batch)-1].RowID
		stored, err := c.storedVectors(ctx, batch)
		if err != nil {
			return nil, reused, err
		}
		var known []PendingText
		var knownBlobs [][]byte
		for _, p := range batch {
			if blob, ok := stored[string(p.hash)]; ok {
				p.saved = true
				known = append(known, p)
				knownBlobs = append(knownBlobs, blob)
			} else if len(pending) < limit {
				pending = append(pending, p)
			}
		}
		if len(known) > 0 {
			took, err := c.storeBlobs(ctx, known, knownBlobs)
			if err != nil {
				return nil, reused, err
			}
			reused += took
		}
	}
	return pending, reused, nil
}

// waitingAfter returns the first n entries waiting for a vector after
// rowid after, in rowid order, with their texts' hashes.
func (c *Cache) waitingAfter(ctx context.Context, after int64, n int) ([]PendingText, error) {
	return pendingRows(ctx, c.db, `SELECT e.rowid, e.content FROM vec_pending p JOIN entries e ON e.rowid = p.rowid WHERE p.rowid > ? ORDER BY p.rowid LIMIT ?`, after, n)
}

// pendingRows runs q through from, which selects waiting entries' rowids
// and texts, and returns them with their texts' hashes.
func pendingRows(ctx context.Context, from querier, q string, args ...any) ([]PendingText, error) {
	rows, err := from.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: pending vectors: %w", err)
	}
	defer rows.Close()
	var out []PendingText
	for rows.Next() {
		var p PendingText
		if err := rows.Scan(&p.RowID, &p.Text); err != nil {
			return nil, err
		}
		p.hash = textHash(p.Text)
		out = append(out, p)
	}
	return out, rows.Err()
}

// PendingIn are the entries f selects that wait for a vector, newest
// first (at most f.Limit; 0: all), so that callers can embed what they
// need before the rest of the backlog.
func (c *Cache) PendingIn(ctx context.Context, f Filter) ([]PendingText, error) {
	// Nothing waits (the steady state): the join below walks every entry
	// the filter admits, looking each up among the pending (2 ms of a
	// session start at 300k entries, for the recent issues).
	if pending, err := c.HasPending(ctx); err != nil || !pending {
		return nil, err
	}
	w, args := f.where()
	return pendingRows(ctx, c.db, `SELECT e.rowid, e.content FROM entries e JOIN vec_pending p ON p.rowid = e.rowid WHERE `+w+` ORDER BY e.created DESC, e.id LIMIT ?`, append(args, f.limit())...)
}

// HasPending reports whether any entry waits for a vector: one lookup,
// for the hot path of every search.
func (c *Cache) HasPending(ctx context.Context) (bool, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM vec_pending LIMIT 1)`).Scan(&n)
	return n > 0, err
}

// PendingCount returns how many entries wait for a vector of the active
// model: what VectorCounts' difference is, without counting every entry
// (16 ms of a save at a million entries, which counted twice).
func (c *Cache) PendingCount(ctx context.Context) (int, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM vec_pending`).Scan(&n)
	return n, err
}

// VectorCounts returns how many entries have a vector for the active
// model and how many entries there are.
func (c *Cache) VectorCounts(ctx context.Context) (have, total int, err error) {
	err = c.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM vec_state), (SELECT count(*) FROM entries)`).Scan(&have, &total)
	return have, total, err
}

// StoreVectors records the vectors of items for the active model, of the
// items whose entries still wait for the vector of the text they were
// read with: another process may have stored it meanwhile, or the text
// changed.
func (c *Cache) StoreVectors(ctx context.Context, items []PendingText, vecs [][]float32) error {
	if len(items) != len(vecs) {
		return fmt.Errorf("cache: %d vectors for %d texts", len(vecs), len(items))
	}
	blobs := make([][]byte, len(vecs))
	for i, v := range vecs {
		blobs[i] = encodeVec(v)
	}
	_, err := c.storeBlobs(ctx, items, blobs)
	return err
}

// storedVectors returns the vectors the vector store holds under the
// active model for the texts of batch, encoded, by text hash: one query
// for the batch (one a text took 15 of the 40 s that restoring a million
// vectors after a rebuild took).
func (c *Cache) storedVectors(ctx context.Context, batch []PendingText) (map[string][]byte, error) {
	hashes := make([]string, len(batch))
	for i, p := range batch {
		hashes[i] = string(p.hash)
	}
	out, err := c.vectorsByHashes(ctx, hashes)
	if err != nil {
		return nil, fmt.Errorf("cache: stored vectors: %w", err)
	}
	return out, nil
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

// VectorRows returns the entries f admits that have a vector for the
// active model, newest first (f.Limit of them, 0: 500), with the vectors.
//
// It reads the vectors of the newest entries only: joining them before
// the sort read the vector of every admitted entry (5,000 of 10,000 for a
// session start's directive check, 40 ms); now it picks the newest keys,
// then their vectors, a page at a time until enough have one, then the
// rows of those.
func (c *Cache) VectorRows(ctx context.Context, f Filter) ([]Row, [][]float32, error) {
	lim := f.Limit
	if lim <= 0 {
		lim = 500
	}
	var picked []int64
	vecOf := map[int64][]float32{}
	for offset := 0; len(picked) < lim; {
		page := lim - len(picked) + (lim-len(picked))/4 + 16 // a few lack a vector
		keys, err := c.newestKeys(ctx, f, page, offset)
		if err != nil {
			return nil, nil, err
		}
		vecs, err := c.vectorsByHash(ctx, keys)
		if err != nil {
			return nil, nil, err
		}
		for _, k := range keys {
			if v, ok := vecs[string(k.hash)]; ok && len(picked) < lim {
				picked = append(picked, k.rowid)
				vecOf[k.rowid] = v
			}
		}
		if len(keys) < page {
			break
		}
		offset += len(keys)
	}
	rows, err := c.rowsByRowid(ctx, picked)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Row, 0, len(picked))
	vecs := make([][]float32, 0, len(picked))
	for _, id := range picked {
		if r, ok := rows[id]; ok {
			out = append(out, r)
			vecs = append(vecs, vecOf[id])
		}
	}
	return out, vecs, nil
}

// vecKey is an entry's rowid and the hash its vector is stored under.
type vecKey struct {
	rowid int64
	hash  []byte
}

// newestKeys returns the keys of the entries f admits that have a vector,
// newest first, n of them from offset.
func (c *Cache) newestKeys(ctx context.Context, f Filter, n, offset int) ([]vecKey, error) {
	ids, args := newest("entries e JOIN vec_state s ON s.rowid = e.rowid", f, n, offset)
	rows, err := c.db.QueryContext(ctx, `SELECT e.rowid, s.hash FROM entries e JOIN vec_state s ON s.rowid = e.rowid
		WHERE e.rowid IN (`+ids+`) ORDER BY e.created DESC, e.id`, args...)
	if err != nil {
		return nil, fmt.Errorf("cache: vectors: %w", err)
	}
	defer rows.Close()
	var out []vecKey
	for rows.Next() {
		var k vecKey
		if err := rows.Scan(&k.rowid, &k.hash); err != nil {
			return nil, fmt.Errorf("cache: vectors: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// vectorsByHash returns the active model's vectors stored under the keys'
// hashes, by hash.
func (c *Cache) vectorsByHash(ctx context.Context, keys []vecKey) (map[string][]float32, error) {
	hashes := make([]string, len(keys))
	for i, k := range keys {
		hashes[i] = string(k.hash)
	}
	out, err := c.decodedByHashes(ctx, hashes)
	if err != nil {
		return nil, fmt.Errorf("cache: vectors: %w", err)
	}
	return out, nil
}

// decodedByHashes is vectorsByHashes with the vectors decoded.
func (c *Cache) decodedByHashes(ctx context.Context, hashes []string) (map[string][]float32, error) {
	blobs, err := c.vectorsByHashes(ctx, hashes)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(blobs))
	for h, blob := range blobs {
		out[h] = decodeVec(blob)
	}
	return out, nil
}

// rowsByRowid returns the rows of the given rowids, by rowid: in a cache
// that holds rows, those it holds whole (heldWhole), the others read and
// then held.
func (c *Cache) rowsByRowid(ctx context.Context, ids []int64) (map[int64]Row, error) {
	out, ids, err := c.heldWhole(ctx, ids)
	if err != nil || len(ids) == 0 {
		return out, err
	}
	idJSON, _ := json.Marshal(ids)
	rows, err := c.db.QueryContext(ctx, `SELECT `+rowCols+`, e.rowid FROM json_each(?) j CROSS JOIN entries e ON e.rowid = j.value`, string(idJSON))
	if err != nil {
		return nil, fmt.Errorf("cache: rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		r, err := scanRow(rows, &id)
		if err != nil {
			return nil, err
		}
		c.keepWhole(id, r)
		out[id] = r
	}
	return out, rows.Err()
}

// VectorsOf returns the stored vectors of the entries with the given ids
// for the active model, by id; an entry without one is left out. It looks
// each id up, where VectorRows reads every entry a filter admits.
func (c *Cache) VectorsOf(ctx context.Context, ids []string) (map[string][]float32, error) {
	out := make(map[string][]float32, len(ids))
	for len(ids) > 0 {
		batch := ids[:min(len(ids), 500)]
		ids = ids[len(batch):]
		args := make([]any, 0, len(batch)+1)
		for _, id := range batch {
			args = append(args, id)
		}
		rows, err := c.db.QueryContext(ctx, `SELECT e.id, v.vec FROM entries e `+vectorJoin+`
			WHERE e.id IN (`+placeholders(len(batch))+`) AND v.model = ?`, append(args, c.vecModel)...)
		if err != nil {
			return nil, fmt.Errorf("cache: vectors: %w", err)
		}
		for rows.Next() {
			var id string
			var blob []byte
			if err := rows.Scan(&id, &blob); err != nil {
				rows.Close()
				return nil, fmt.Errorf("cache: vectors: %w", err)
			}
			out[id] = decodeVec(blob)
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("cache: vectors: %w", err)
		}
	}
	return out, nil
}

// Stamp changes whenever entries or vectors change (triggers and
// StoreVectors bump it), so a long-lived process can keep what it derived
// from them until then.
func (c *Cache) Stamp(ctx context.Context) (string, error) {
	var s string
	err := c.db.QueryRowContext(ctx, `SELECT coalesce((SELECT value FROM meta WHERE key='entries_gen'), '') || '/' || coalesce((SELECT value FROM meta WHERE key='vec_gen'), '') || '/' || coalesce((SELECT value FROM meta WHERE key='vec_model'), '')`).Scan(&s)
	return s, err
}

// TextVectors are the stored vectors of texts by the model in use, in
// order; nil where none is stored.
func (c *Cache) TextVectors(ctx context.Context, texts []string) ([][]float32, error) {
	if c.vecModel == "" {
		return nil, fmt.Errorf("cache: no embedding model selected")
	}
	hashes := make([]string, len(texts))
	for i, t := range texts {
		hashes[i] = string(textHash(t))
	}
	vecs, err := c.decodedByHashes(ctx, hashes)
	if err != nil {
		return nil, fmt.Errorf("cache: text vectors: %w", err)
	}
	out := make([][]float32, len(texts))
	for i, h := range hashes {
		out[i] = vecs[h] // nil where none is stored
	}
	return out, nil
}

// SaveTextVectors stores the vectors of texts, by the model in use: a
// detector's templates, which are no entry's, so that a process without
// the model reads them (TextVectors); or a text about to be an entry's,
// which the entry then takes instead of being embedded (pendingVectors).
func (c *Cache) SaveTextVectors(ctx context.Context, texts []string, vecs [][]float32) error {
	if c.vecModel == "" || len(texts) != len(vecs) {
		return fmt.Errorf("cache: %d vectors for %d texts (model %q)", len(vecs), len(texts), c.vecModel)
	}
	for i, t := range texts {
		if _, err := c.db.ExecContext(ctx, `INSERT OR REPLACE INTO vs.vecs(model, hash, vec) VALUES(?, ?, ?)`, c.vecModel, textHash(t), encodeVec(vecs[i])); err != nil {
			return fmt.Errorf("cache: save text vectors: %w", err)
		}
	}
	return nil
}
