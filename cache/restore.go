package cache

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// RestoreVectors gives every entry waiting for a vector the one the vector
// store already holds for its text under the active model, and returns how
// many it restored: after the cache is rebuilt from the refs, which keeps
// the vector store, nothing needs embedding again. progress, if set, is
// told how many of the waiting entries it has been through (a million
// take most of a minute).
func (c *Cache) RestoreVectors(ctx context.Context, progress func(done, total int)) (int, error) {
	if c.vecModel == "" {
		return 0, fmt.Errorf("cache: no embedding model selected")
	}
	scan, err := c.restoreByScan(ctx)
	if err != nil {
		return 0, err
	}
	if progress == nil {
		progress = func(int, int) {}
	}
	if scan {
		return c.restoreScanning(ctx, progress)
	}
	_, reused, err := c.pendingVectors(ctx, 0, true)
	if err == nil {
		progress(reused, reused)
	}
	return reused, err
}

// WaitingStored reports whether most of the first entries waiting for a
// vector (restoreSample of them) have one in the store under the active
// model, as after a reindex killed while it restored them. Then
// RestoreVectors takes the waiting back in one pass over the store;
// otherwise (a model newly chosen) that pass would read the store for
// little, and embedding finds what it holds by lookups.
func (c *Cache) WaitingStored(ctx context.Context) (bool, error) {
	if c.vecModel == "" {
		return false, fmt.Errorf("cache: no embedding model selected")
	}
	sample, err := c.waitingAfter(ctx, -1<<63, restoreSample)
	if err != nil || len(sample) == 0 {
		return false, err
	}
	stored, err := c.storedVectors(ctx, sample)
	if err != nil {
		return false, err
	}
	found := 0
	for _, p := range sample {
		if _, ok := stored[string(p.hash)]; ok {
			found++
		}
	}
	return 2*found >= len(sample), nil
}

// restoreSample is how many waiting entries WaitingStored looks up.
const restoreSample = 64

// restoreByScan reports whether restoring is cheaper by one pass over the
// vector store than by a lookup per waiting entry: a lookup reads pages
// in no order and cost about four stored vectors read in order (in
// profiles of a reindex at a million of each, 15.5 s of lookups against
// 4.2 s reading every one).
func (c *Cache) restoreByScan(ctx context.Context) (bool, error) {
	waiting, err := c.PendingCount(ctx)
	if err != nil || waiting == 0 {
		return false, err
	}
	var pages, pageSize, vecBytes int64
	err = c.db.QueryRowContext(ctx, `SELECT (SELECT page_count FROM pragma_page_count('vs')), (SELECT page_size FROM pragma_page_size('vs')),
		coalesce((SELECT length(vec) FROM vs.vecs WHERE model = ? LIMIT 1), 0)`, c.vecModel).Scan(&pages, &pageSize, &vecBytes)
	if err != nil {
		return false, fmt.Errorf("cache: size of the vector store: %w", err)
	}
	stored := pages * pageSize / (vecBytes + 32) // about what a stored vector takes with its key
	return int64(waiting)*4 >= stored, nil
}

// restorePage is how many stored vectors restoreScanning reads, and
// writes the ones it takes of, at a time.
var restorePage = 4096

// restoreScanning is RestoreVectors by one pass over the vector store in
// the order it was stored: it hashes every waiting text, then takes the
// vectors of the ones the store holds, a page of the store at a time, in
// one transaction (one per page wrote the index's pages again for each).
// The store is read on its second connection (vectorsAside) while this
// one writes the page read before: at a million vectors, reading was 11
// of the restore's 57 s.
//
// What waits is read once the writer holds the write lock (blobWriter
// writes first): two processes that both found a million entries waiting
// (the first commands after an upgrade, or after a reindex killed as it
// restored) each wrote every vector again, and sqlite-vec keeps a
// replaced vector's slot, so the index held three million slots.
//
// The transaction and the list run without ctx (noCancel), which is
// checked between their steps: a statement ctx interrupts can cost the
// connection, and with it the vector store attached to it.
func (c *Cache) restoreScanning(ctx context.Context, progress func(done, total int)) (int, error) {
	tx, err := c.db.BeginTx(noCancel, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	w, err := c.blobWriter(noCancel, tx)
	if err != nil {
		return 0, err
	}
	defer w.close()
	want, err := c.waitingByHash(ctx, tx)
	if err != nil || len(want.first) == 0 {
		return 0, err
	}
	// an index that began empty holds no sign bits to replace
	if err := tx.QueryRowContext(noCancel, `SELECT NOT EXISTS (SELECT 1 FROM vec_bits)`).Scan(&w.fresh); err != nil {
		return 0, fmt.Errorf("cache: restore vectors: %w", err)
	}
	var from querier = tx
	table := "vs.vecs"
	if aside := c.vectorsAside(); aside != nil {
		from, table = aside, "vecs"
	}
	ctx, cancel := context.WithCancel(ctx)
	pages := make(chan storedVectors, 1)
	go c.readStore(ctx, from, table, want, pages)
	defer func() {
		cancel()
		for range pages { // closed as the reader returns: nothing reads the store after this
		}
	}()
	restored := 0
	for p := range pages {
		if p.err != nil {
			return 0, p.err
		}
		if err := w.store(ctx, p.items, p.blobs); err != nil {
			return 0, err
		}
		restored += len(p.items)
		progress(restored, want.n)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := tx.Commit(); err != nil {
		return 0, err
	}
	progress(want.n, want.n) // the rest wait for their embedding
	return restored, nil
}

// storedVectors is a page of the vector store's vectors that waiting
// entries take (storedPage), or why it could not be read.
type storedVectors struct {
	items []PendingText
	blobs [][]byte
	err   error
}

// readStore sends to pages the pages of the store (table, read through
// from) that entries of want take, until it has read the store, want is
// empty or ctx is done, then closes pages. It alone uses want meanwhile.
func (c *Cache) readStore(ctx context.Context, from querier, table string, want *waiting, pages chan<- storedVectors) {
	defer close(pages)
	after := int64(-1 << 63)
	for len(want.first) > 0 {
		var p storedVectors
		var n int
		p.items, p.blobs, n, after, p.err = c.storedPage(ctx, from, table, after, restorePage, want)
		select {
		case pages <- p:
		case <-ctx.Done():
			return
		}
		if p.err != nil || n < restorePage {
			return
		}
	}
}

// waiting are the entries waiting for a vector by their text's hash: the
// first of each text in first, any more (the same text saved again) in
// more. Neither map holds pointers in its buckets but more's few slices,
// so that the garbage collector does not walk a million of them again
// and again while a reindex restores (5% of its CPU at a million).
type waiting struct {
	first map[[16]byte]int64
	more  map[[16]byte][]int64
	n     int // entries, in both
}

// take calls f with each entry of hash k, and forgets them.
func (w *waiting) take(k [16]byte, f func(id int64)) {
	id, ok := w.first[k]
	if !ok {
		return
	}
	f(id)
	for _, id := range w.more[k] {
		f(id)
	}
	delete(w.first, k)
	delete(w.more, k)
}

// waitingByHash lists the entries waiting for a vector by their text's
// hash.
func (c *Cache) waitingByHash(ctx context.Context, q querier) (*waiting, error) {
	rows, err := q.QueryContext(noCancel, `SELECT e.rowid, e.content FROM vec_pending p JOIN entries e ON e.rowid = p.rowid`)
	if err != nil {
		return nil, fmt.Errorf("cache: pending vectors: %w", err)
	}
	defer rows.Close()
	want := &waiting{first: map[[16]byte]int64{}, more: map[[16]byte][]int64{}}
	for rows.Next() {
		if want.n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		var id int64
		var text string
		if err := rows.Scan(&id, &text); err != nil {
			return nil, err
		}
		k := [16]byte(textHash(text))
		want.n++
		if _, ok := want.first[k]; ok {
			want.more[k] = append(want.more[k], id)
		} else {
			want.first[k] = id
		}
	}
	return want, rows.Err()
}

// storedPage reads the next n stored vectors after the one numbered
// after, and returns the entries of want those of the active model belong
// to (taken out of want) with their vectors, how many it read and the
// number of the last.
func (c *Cache) storedPage(ctx context.Context, from querier, table string, after int64, n int, want *waiting) (items []PendingText, blobs [][]byte, read int, last int64, err error) {
	rows, err := from.QueryContext(ctx, `SELECT id, model = ?, hash, vec FROM `+table+` WHERE id > ? ORDER BY id LIMIT ?`, c.vecModel, after, n)
	if err != nil {
		return nil, nil, 0, 0, fmt.Errorf("cache: stored vectors: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var h, blob []byte
		var ours bool
		if err := rows.Scan(&last, &ours, &h, &blob); err != nil {
			return nil, nil, 0, 0, err
		}
		read++
		if !ours {
			continue // another model's
		}
		if len(h) != 16 {
			continue
		}
		k := [16]byte(h)
		want.take(k, func(id int64) {
			items, blobs = append(items, PendingText{RowID: id, hash: h, saved: true}), append(blobs, blob)
		})
	}
	return items, blobs, read, last, rows.Err()
}

// storeBlobs is StoreVectors with the vectors encoded (encodeVec), and
// returns how many it stored. It stores only the items whose entries
// still wait, with the text their vectors were made of, once it holds the
// write lock (blobWriter writes first): what waits was read before,
// outside it, so two processes that embed or restore the same waiting
// entries at once (three searches after an upgrade) wrote each vector
// twice or more, and sqlite-vec keeps a replaced vector's slot. An entry
// whose text changed meanwhile waits for its new text's vector.
func (c *Cache) storeBlobs(ctx context.Context, items []PendingText, blobs [][]byte) (int, error) {
	tx, err := c.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	w, err := c.blobWriter(ctx, tx)
	if err != nil {
		return 0, err
	}
	defer w.close()
	items, blobs, err = stillWaiting(ctx, tx, items, blobs)
	if err != nil || len(items) == 0 {
		return 0, err
	}
	if err := w.store(ctx, items, blobs); err != nil {
		return 0, err
	}
	return len(items), tx.Commit()
}

// stillWaiting returns the items (and their blobs) whose entries wait for
// a vector and hold the text of the item's hash, as tx sees them.
func stillWaiting(ctx context.Context, tx *sql.Tx, items []PendingText, blobs [][]byte) ([]PendingText, [][]byte, error) {
	ids := make([]int64, len(items))
	for i, p := range items {
		ids[i] = p.RowID
	}
	js, err := json.Marshal(ids)
	if err != nil {
		return nil, nil, err
	}
	waiting, err := pendingRows(ctx, tx, `SELECT e.rowid, e.content FROM vec_pending p JOIN entries e ON e.rowid = p.rowid WHERE p.rowid IN (SELECT value FROM json_each(?))`, string(js))
	if err != nil {
		return nil, nil, err
	}
	hashes := make(map[int64][]byte, len(waiting))
	for _, p := range waiting {
		hashes[p.RowID] = p.hash
	}
	keep, keepBlobs := items[:0:0], blobs[:0:0]
	for i, p := range items {
		if h, ok := hashes[p.RowID]; ok && bytes.Equal(h, p.hash) {
			keep, keepBlobs = append(keep, p), append(keepBlobs, blobs[i])
		}
	}
	return keep, keepBlobs, nil
}

// blobWriter stores vectors in a transaction (storeBlobs).
type blobWriter struct {
	model string
	stmts []*sql.Stmt // in blobWriter's order
	// fresh says the index held no sign bits when the writer began, so
	// none of its rows has any to delete (a million no-op deletes cost 3 s
	// of a reindex)
	fresh bool
}

// The statements of a blobWriter, in order: a vector's row in the store
// and in the sign-bit index, one vector at a time; its state and the end
// of its wait, a batch at a time (storeBatch).
const (
	storeVector = iota
	storeUnsign
	storeSign
	storeStates
	storeDone
)

// storeBatch is how many vectors store marks stored with one statement
// (a variable for tests).
var storeBatch = 1024

func (c *Cache) blobWriter(ctx context.Context, tx *sql.Tx) (*blobWriter, error) {
	w := &blobWriter{model: c.vecModel}
	for _, q := range []string{
		storeVector: `INSERT OR REPLACE INTO vs.vecs(model, hash, vec) VALUES(?, ?, ?)`,
		storeUnsign: `DELETE FROM vec_bits WHERE rowid=?`,
		storeSign:   `INSERT INTO vec_bits(rowid, e, m) VALUES(?, vec_quantize_binary(?), vec_bit(?))`,
		storeStates: `INSERT OR REPLACE INTO vec_state(rowid, hash) SELECT value->>0, unhex(value->>1) FROM json_each(?)`,
		storeDone:   `DELETE FROM vec_pending WHERE rowid IN (SELECT value FROM json_each(?))`,
	} {
		st, err := tx.PrepareContext(ctx, q)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("cache: store vectors: %w", err)
		}
		w.stmts = append(w.stmts, st)
	}
	if _, err := tx.ExecContext(ctx, bumpGen); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *blobWriter) close() {
	for _, st := range w.stmts {
		st.Close()
	}
}

// store writes the vectors of items (blobs[i] is items[i]'s), each to
// the vector store unless it has it already, and to the index. Its
// statements run without ctx (noCancel), which it checks between
// batches: a reindex restores a million vectors here. The states and the
// ends of the waits are written a batch at a time. With both, a
// reindex's restore of a million vectors took 52-55 s against 75-83 s
// (the 1M bench repository, A/B interleaved on the 2-core machine).
func (w *blobWriter) store(ctx context.Context, items []PendingText, blobs [][]byte) error {
	for lo := 0; lo < len(items); lo += storeBatch {
		if err := ctx.Err(); err != nil {
			return err
		}
		hi := min(lo+storeBatch, len(items))
		states := make([][2]any, 0, hi-lo)
		done := make([]int64, 0, hi-lo)
		for i, p := range items[lo:hi] {
			blob := blobs[lo+i]
			for j, args := range [][]any{storeVector: {w.model, p.hash, blob}, storeUnsign: {p.RowID}, storeSign: {p.RowID, blob, magnitudeBits(blob)}} {
				if j == storeVector && p.saved || j == storeUnsign && w.fresh {
					continue
				}
				if _, err := w.stmts[j].ExecContext(noCancel, args...); err != nil {
					return fmt.Errorf("cache: store vector: %w", err)
				}
			}
			states = append(states, [2]any{p.RowID, hex.EncodeToString(p.hash)})
			done = append(done, p.RowID)
		}
		for _, batch := range []struct {
			stmt int
			rows any
		}{{storeStates, states}, {storeDone, done}} {
			js, err := json.Marshal(batch.rows)
			if err != nil {
				return fmt.Errorf("cache: store vectors: %w", err)
			}
			if _, err := w.stmts[batch.stmt].ExecContext(noCancel, string(js)); err != nil {
				return fmt.Errorf("cache: store vectors: %w", err)
			}
		}
	}
	return nil
}
