package cache

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// Use is one use of entries: shown to a person or injected into an
// agent. Access statistics are local: they are not part of the memory
// refs, and live in the usage store (usage.go), which outlives the cache.
type Use struct {
	IDs []string
	At  time.Time
	// Session, when set, counts each entry at most once for that agent
	// session, however often the session is shown it.
	Session string
	// Read says the entries were opened on purpose (show, related), which
	// the ranking's confidence prior counts; entries that only appeared
	// among results count for decay alone.
	Read bool
}

// RecordUse counts a use of its entries.
func (c *Cache) RecordUse(ctx context.Context, u Use) error {
	if len(u.IDs) == 0 {
		return nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	read := 0
	if u.Read {
		read = 1
	}
	for _, id := range u.IDs {
		if u.Session != "" {
			st, err := tx.stmt(`INSERT OR IGNORE INTO used(session, id) VALUES(?, ?)`)
			if err != nil {
				return fmt.Errorf("cache: record use: %w", err)
			}
			res, err := st.ExecContext(noCancel, u.Session, id)
			if err != nil {
				return fmt.Errorf("cache: record use: %w", err)
			}
			if n, _ := res.RowsAffected(); n == 0 {
				continue // counted for this session already
			}
		}
		if err := tx.exec(`INSERT INTO access(id, count, last, reads) VALUES(?, 1, ?, ?) ON CONFLICT(id) DO UPDATE SET count=count+1, last=max(last, excluded.last), reads=reads+excluded.reads`, id, u.At.UnixNano(), read); err != nil {
			return err
		}
		// its decay is judged again at the next pass
		if err := tx.exec(`UPDATE decay SET next = 0 WHERE rowid = (SELECT rowid FROM entries WHERE id = ?)`, id); err != nil {
			return err
		}
	}
	return tx.tx.Commit()
}

// bigPass is the number of verdicts from which a pass makes its indexes
// again instead of keeping them up (Maintain).
var bigPass = 100_000

// Standing is an entry's authored state, usage and current maintenance
// verdict.
type Standing struct {
	rowid        int64
	ID           string
	Usage        memory.Usage
	AutoTier     memory.Tier // "" when maintenance left the tier alone
	AutoArchived bool
}

// Verdict is maintenance's decision for one entry.
type Verdict struct {
	Tier     memory.Tier // "" keeps the authored tier
	Archived bool
	Next     time.Time // when to judge it again (zero: never), unused and unchanged
}

// DecayPass is one maintenance pass (Maintain).
type DecayPass struct {
	Now time.Time
	// All judges every entry; otherwise only those due: new or changed
	// since they were last judged, used since, or whose Next has come.
	All    bool
	DryRun bool // judge, record nothing
	// Judge decides one entry's verdict. It runs inside the pass's
	// transaction: it must not use the cache.
	Judge func(Standing) Verdict
	// Progress, if set, is told how many of the entries due have been
	// judged (a million take 20 s after a rebuild).
	Progress func(done, total int)
}

// Maintain runs a maintenance pass: it judges the entries maintenance may
// act on (not archived by a person, not commit notes) and records the
// verdicts that changed, and when each entry is due again, in one
// transaction, so that a use recorded meanwhile is never overwritten. A
// pass at an earlier time than the last one (a clock set back, --as-of)
// judges every entry. It returns how many entries were judged.
func (c *Cache) Maintain(ctx context.Context, p DecayPass) (int, error) {
	tx, err := c.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer tx.Rollback()
	now := p.Now.UnixNano()
	var last int64
	if err := tx.queryRow(`SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'decay_now'`).Scan(&last); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("cache: maintain: %w", err)
	}
	due := now
	if p.All || now < last {
		due = math.MaxInt64
	}
	standings, err := tx.standings(due)
	if err != nil {
		return 0, err
	}
	if p.DryRun {
		for _, st := range standings {
			p.Judge(st)
		}
		return len(standings), nil
	}
	// A pass over most entries (the first after a rebuild) makes the
	// indexes its verdicts move again once after, as a rebuild makes the
	// entries' (dropIndexes): kept up verdict by verdict, they were a
	// fifth of the pass at a million entries.
	// Its row triggers (entries_gen, lex_log's rows of changed columns)
	// are dropped too, and what they say said once after: every row may
	// have changed. It runs with the larger page cache of a rebuild.
	remake := len(standings) >= bigPass
	if remake {
		for _, q := range []string{`DROP INDEX IF EXISTS decay_next`, `DROP INDEX IF EXISTS entries_live`,
			`DROP TRIGGER IF EXISTS entries_gen_update`, `DROP TRIGGER IF EXISTS entries_lex_state`} {
			if err := tx.exec(q); err != nil {
				return 0, fmt.Errorf("cache: maintain: %w", err)
			}
		}
		if err := tx.largeCache(); err != nil {
			return 0, fmt.Errorf("cache: maintain: %w", err)
		}
	}
	var w verdictWriter
	for i, st := range standings {
		if p.Progress != nil && i%verdictBatch == 0 {
			p.Progress(i, len(standings))
		}
		v := p.Judge(st)
		next := int64(math.MaxInt64)
		if !v.Next.IsZero() {
			next = v.Next.UnixNano()
		}
		if err := w.add(tx, st, v, next); err != nil {
			return 0, err
		}
	}
	if err := w.flush(tx); err != nil {
		return 0, err
	}
	if p.Progress != nil {
		p.Progress(len(standings), len(standings))
	}
	// what maintenance leaves alone is not due again until it changes
	// (driven by the due rows: "rowid IN (SELECT ... FROM entries)"
	// scanned every entry)
	if err := tx.exec(`UPDATE decay SET next=? WHERE next <= ? AND EXISTS (SELECT 1 FROM entries e WHERE e.rowid = decay.rowid AND (e.archived != 0 OR e.type = ?))`,
		int64(math.MaxInt64), due, string(memory.TypeNote)); err != nil {
		return 0, fmt.Errorf("cache: maintain: %w", err)
	}
	if remake {
		for _, q := range []string{decayIndex, liveIndex, genUpdateTrigger, lexTriggers, bumpEntriesGen, `INSERT INTO lex_log(row) VALUES(-1)`} {
			if _, err := tx.tx.ExecContext(noCancel, q); err != nil { // lexTriggers: several statements
				return 0, fmt.Errorf("cache: maintain: make an index or trigger again: %w", err)
			}
		}
		tx.smallCache()
	}
	if err := tx.SetMeta("decay_now", strconv.FormatInt(now, 10)); err != nil {
		return 0, fmt.Errorf("cache: maintain: %w", err)
	}
	if err := tx.exec(`DELETE FROM meta WHERE key = ?`, unjudgedKey); err != nil {
		return 0, fmt.Errorf("cache: maintain: %w", err)
	}
	return len(standings), tx.tx.Commit()
}

// unjudgedKey marks in meta a cache whose index was rebuilt (Tx.Reset)
// and has not been through a maintenance pass since: every entry waits
// for its decay verdict.
const unjudgedKey = "decay_unjudged"

// Unjudged reports whether the index was rebuilt and no maintenance pass
// has given its entries their decay verdicts since (one that a killed
// process left undone included).
func (c *Cache) Unjudged(ctx context.Context) (bool, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM meta WHERE key = ?`, unjudgedKey).Scan(&n)
	return n > 0, err
}

// verdictBatch is how many verdicts a verdictWriter writes with one
// statement (a variable for tests).
var verdictBatch = 1024

// verdictWriter records a pass's verdicts a batch at a time: a statement
// for each of a million entries was half of the pass after a rebuild.
type verdictWriter struct {
	nexts   [][2]int64 // rowid, next
	changed [][3]any   // rowid, auto tier, auto archived
}

// add records st's verdict v, and when it is due again.
func (w *verdictWriter) add(tx *Tx, st Standing, v Verdict, next int64) error {
	if v.Tier != st.AutoTier || v.Archived != st.AutoArchived {
		w.changed = append(w.changed, [3]any{st.rowid, string(v.Tier), v.Archived})
	}
	w.nexts = append(w.nexts, [2]int64{st.rowid, next})
	if len(w.nexts) < verdictBatch {
		return nil
	}
	return w.flush(tx)
}

// flush writes the verdicts added since the last.
func (w *verdictWriter) flush(tx *Tx) error {
	for _, b := range []struct {
		q    string
		rows any
		n    int
	}{
		{`UPDATE entries SET auto_tier = j.value->>1, auto_archived = j.value->>2 FROM json_each(?) j WHERE entries.rowid = j.value->>0`, w.changed, len(w.changed)},
		{`UPDATE decay SET next = j.value->>1 FROM json_each(?) j WHERE decay.rowid = j.value->>0`, w.nexts, len(w.nexts)},
	} {
		if b.n == 0 {
			continue
		}
		js, err := json.Marshal(b.rows)
		if err == nil {
			err = tx.exec(b.q, string(js))
		}
		if err != nil {
			return fmt.Errorf("cache: maintain: %w", err)
		}
	}
	w.nexts, w.changed = w.nexts[:0], w.changed[:0]
	return nil
}

// standings lists the entries maintenance may act on whose next judgement
// is due by due (a UnixNano time).
func (t *Tx) standings(due int64) ([]Standing, error) {
	rows, err := t.tx.QueryContext(t.ctx, `SELECT d.rowid, e.id, e.type, e.created, e.updated, e.pinned, e.tier_explicit, e.tier, e.auto_tier, e.auto_archived,
		coalesce(a.count, 0), coalesce(a.last, 0) FROM decay d JOIN entries e ON e.rowid = d.rowid LEFT JOIN access a ON a.id = e.id
		WHERE d.next <= ? AND e.archived = 0 AND e.type != ?`, due, string(memory.TypeNote))
	if err != nil {
		return nil, fmt.Errorf("cache: standings: %w", err)
	}
	defer rows.Close()
	var out []Standing
	for rows.Next() {
		var s Standing
		var created, updated, last int64
		var typ, tier, auto string
		if err := rows.Scan(&s.rowid, &s.ID, &typ, &created, &updated, &s.Usage.Pinned, &s.Usage.TierExplicit, &tier, &auto, &s.AutoArchived, &s.Usage.Accesses, &last); err != nil {
			return nil, err
		}
		s.Usage.Type, s.Usage.Tier, s.AutoTier = memory.Type(typ), memory.Tier(tier), memory.Tier(auto)
		s.Usage.Created, s.Usage.Updated = time.Unix(0, created).UTC(), time.Unix(0, updated).UTC()
		if last > 0 {
			s.Usage.LastAccess = time.Unix(0, last).UTC()
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// LastAccess is when each of ids was last used here (entries never used
// are absent).
func (c *Cache) LastAccess(ctx context.Context, ids []string) (map[string]time.Time, error) {
	idJSON, _ := json.Marshal(ids)
	rows, err := c.db.QueryContext(ctx, `SELECT id, last FROM access WHERE id IN (SELECT value FROM json_each(?)) AND last > 0`, string(idJSON))
	if err != nil {
		return nil, fmt.Errorf("cache: access: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var id string
		var last int64
		if err := rows.Scan(&id, &last); err != nil {
			return nil, err
		}
		out[id] = time.Unix(0, last).UTC()
	}
	return out, rows.Err()
}

// ResetInjections forgets how often an entry was injected into agent
// sessions, so that it is shown in full again.
func (c *Cache) ResetInjections(ctx context.Context, id string) error {
	if _, err := c.db.ExecContext(ctx, `DELETE FROM injections WHERE id = ?`, id); err != nil {
		return fmt.Errorf("cache: reset injections: %w", err)
	}
	return nil
}

// Injection is how often an entry has been injected into one agent
// session, and whether it was stale when first injected there.
type Injection struct {
	Count int
	Stale bool
}

// CountInjections records that entries were injected into an agent
// session's context once more, and returns how often each has been now.
// stale says, for an entry's first injection in the session, whether it
// had gone stale; later injections keep that first answer.
func (c *Cache) CountInjections(ctx context.Context, session string, ids []string, stale func(id string) bool) (map[string]Injection, error) {
	out := map[string]Injection{}
	if len(ids) == 0 {
		return out, nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	for _, id := range ids {
		var in Injection
		if err := tx.queryRow(`INSERT INTO injections(session, id, count, stale) VALUES(?, ?, 1, ?)
			ON CONFLICT(session, id) DO UPDATE SET count=count+1 RETURNING count, stale`, session, id, stale(id)).Scan(&in.Count, &in.Stale); err != nil {
			return nil, err
		}
		out[id] = in
	}
	return out, tx.tx.Commit()
}
