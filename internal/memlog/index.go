package memlog

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Source is the log an Index reads: a Store, and of its objects whether
// one is there and a commit's tree and author.
type Source interface {
	Store
	// HasObject reports whether the object h is in the repository.
	HasObject(h gitstore.Hash) bool
	// CommitTree returns the tree of commit c, an error when c is not a
	// readable commit.
	CommitTree(c gitstore.Hash) (gitstore.Hash, error)
	// CommitInfo returns the author ("Name <email>") and time of commit c.
	CommitInfo(c gitstore.Hash) (string, time.Time, error)
}

var _ Source = (*gitstore.Repo)(nil)

// Index brings a cache up to memory's refs: the entries and operations of
// each memory ref, and the commit notes of gitstore.NotesRef. It reads only
// what changed between the tips the cache indexed and the refs' tips; it
// writes nothing but the cache. It keeps no state between calls.
type Index struct {
	// Log is where memory is read.
	Log Source
	// Warnf is told what could not be read as memory (nil: nothing is).
	Warnf func(format string, args ...any)
	// Progress, if set, is told how far a long run has got (refs of
	// thousands of changed files).
	Progress func(done, total int)
	// Droppable reports whether the entries of a ref that vanished can be
	// taken out of the index alone (a subscription's); for any other ref
	// the index is rebuilt, since its entries may live on in another ref.
	Droppable func(ref string) bool
	// Private reports whether ref holds private memory (the cache marks
	// its entries so).
	Private func(ref string) bool
}

// Update brings c up to local (the memory refs by tip) in one
// transaction, unless c already indexes exactly those tips. Anything
// unreadable is recorded in the cache as a problem, warned about, and
// skipped: the rest of memory stays usable.
func (ix *Index) Update(ctx context.Context, c *cache.Cache, local map[string]gitstore.Hash) error {
	stored, err := c.Tips(ctx)
	if err != nil {
		return err
	}
	if sameTips(stored, local) {
		return nil
	}
	tx, err := c.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if stored, err = tx.Tips(); err != nil { // another process may have indexed meanwhile
		return err
	}
	if !sameTips(stored, local) {
		if err := ix.Apply(ctx, tx, stored, local); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func sameTips(stored map[string]string, local map[string]gitstore.Hash) bool {
	if len(stored) != len(local) {
		return false
	}
	for ref, h := range local {
		if stored[ref] != h.String() {
			return false
		}
	}
	return true
}

// Apply indexes in tx the changes from the stored tips (what the cache
// indexed, by ref) to local. A vanished ref, or an indexed tip whose
// objects are gone (history rewritten), needs a full rebuild, as does an
// index built from no ref.
func (ix *Index) Apply(ctx context.Context, tx *cache.Tx, stored map[string]string, local map[string]gitstore.Hash) error {
	full := false
	for ref, h := range stored {
		old, err := parseHash(h)
		if err != nil || !ix.Log.HasObject(old) {
			full = true
		} else if _, ok := local[ref]; !ok && !ix.dropRef(tx, ref, old) {
			full = true
		}
	}
	// An index holding nothing from the refs yet (a new cache, a clone's
	// first command) is built as a full rebuild: every entry is new.
	if full || len(stored) == 0 {
		if err := tx.Reset(); err != nil {
			return err
		}
		stored = map[string]string{}
	}
	var problems []string
	// refs in order, so that a rebuild writes rows in the same order
	for _, ref := range slices.Sorted(maps.Keys(local)) {
		tip := local[ref]
		if stored[ref] == tip.String() {
			continue
		}
		old, _ := parseHash(stored[ref])
		if old != gitstore.ZeroHash {
			if _, err := ix.Log.CommitTree(old); err != nil {
				old = gitstore.ZeroHash // the indexed tip was garbage: re-read everything
			}
		}
		p, complete, err := ix.applyRef(ctx, tx, ref, old, tip)
		if err != nil {
			return err
		}
		problems = append(problems, p...)
		// The stored tip says "everything up to here is indexed": a read
		// that failed for want of an object (a repack in flight) leaves it
		// where it was, so the next command reads those changes again.
		if !complete {
			continue
		}
		if err := tx.SetTip(ref, tip.String()); err != nil {
			return err
		}
	}
	sort.Strings(problems)
	const shown = 10
	for i, p := range problems {
		if i == shown {
			ix.warnf("... and %d more unreadable memory objects (see git synaptic status)", len(problems)-shown)
			break
		}
		ix.warnf("%s", p)
	}
	return nil
}

// dropRef takes the entries of a vanished subscription ref out of the
// index, reading its last indexed tip; false when that is not possible and
// the index needs a rebuild. Other refs always rebuild: their entries may
// live on in another ref.
func (ix *Index) dropRef(tx *cache.Tx, ref string, old gitstore.Hash) bool {
	if ix.Droppable == nil || !ix.Droppable(ref) {
		return false
	}
	changes, err := ix.Log.Diff(old, gitstore.ZeroHash)
	if err != nil {
		return false
	}
	for _, ch := range changes {
		kind, id := memory.PathKind(ch.Path)
		switch kind {
		case "entry":
			err = tx.DeleteEntry(id)
		case "op":
			err = tx.DeleteOp(id)
		}
		if err != nil {
			return false
		}
	}
	return tx.ClearProblems(ref) == nil && tx.SetTip(ref, "") == nil
}

func parseHash(s string) (gitstore.Hash, error) {
	if len(s) != 40 {
		return gitstore.ZeroHash, errors.New("bad hash")
	}
	return gitstore.NewHash(s), nil
}

// applyRef indexes the changes on one ref and returns problem
// descriptions. complete is false when an object was missing (it may come
// back: git was repacking), so the ref's tip must not be taken as indexed.
func (ix *Index) applyRef(ctx context.Context, tx *cache.Tx, ref string, old, tip gitstore.Hash) (problems []string, complete bool, err error) {
	complete = true
	problem := func(path string, obj gitstore.Hash, err error) error {
		if gitstore.IsMissing(err) {
			complete = false
		}
		problems = append(problems, fmt.Sprintf("%s: %s (object %s): %v", ref, path, obj.String()[:12], err))
		return tx.Problem(ref, path, obj.String(), err.Error())
	}
	changes, err := ix.Log.Diff(old, tip)
	if err != nil {
		if err := tx.ClearProblems(ref); err != nil {
			return nil, false, err
		}
		err = problem("(ref)", tip, fmt.Errorf("not readable as memory: %w", err))
		return problems, complete, err
	}
	if err := tx.ClearProblem(ref, "(ref)"); err != nil {
		return nil, false, err
	}
	if ref == gitstore.NotesRef {
		err := ix.applyNotes(tx, tip, changes, problem)
		return problems, complete, err
	}
	private := ix.Private != nil && ix.Private(ref)
	// Progress covers reading the changed files, then folding them into
	// the index on commit (each about half the work; a rebuild writes
	// what it reads, and folds on commit only entries with operations).
	report := ix.Progress
	if len(changes) < 2000 {
		report = nil
	}
	total, read := len(changes), len(changes)/2
	if tx.Rebuilding() {
		read = total
	}
	if report != nil {
		tx.OnFold(func(done, n int) { report(read+done*(total-read)/max(n, 1), total) })
	}
	reads, stop := ix.readAhead(ctx, changes)
	defer stop()
	for i, ch := range changes {
		if report != nil && i%1000 == 0 {
			report(i*read/total, total)
		}
		if err := ix.applyChange(ctx, tx, ref, private, ch, reads, problem); err != nil {
			return nil, false, err
		}
	}
	return problems, complete, nil
}

// applyChange indexes one changed file of ref. What cannot be read as
// memory goes to problem; only cache failures are returned.
func (ix *Index) applyChange(ctx context.Context, tx *cache.Tx, ref string, private bool, ch gitstore.Change, reads <-chan readChange, problem func(string, gitstore.Hash, error) error) error {
	if err := tx.ClearProblem(ref, ch.Path); err != nil {
		return err
	}
	kind, id := memory.PathKind(ch.Path)
	if !toRead(ch, kind) {
		switch {
		case ch.Deleted && kind == "entry":
			return tx.DeleteEntry(id)
		case ch.Deleted && kind == "op":
			return tx.DeleteOp(id)
		case ch.Deleted, kind == "purged": // purges are applied to the history by sync and purge
			return nil
		case kind == "":
			return problem(ch.Path, ch.Hash, errors.New("not part of the memory format (want entries/xx/<id>.json, ops/xx/<id>.json or purged/xx/<id>.json)"))
		default:
			return problem(ch.Path, ch.Hash, fmt.Errorf("not a regular file (mode %o)", ch.Mode))
		}
	}
	r, ok := <-reads
	switch {
	case !ok:
		return fmt.Errorf("reading memory stopped: %w", context.Cause(ctx))
	case r.err != nil:
		return problem(ch.Path, ch.Hash, r.err)
	case kind == "entry":
		return tx.PutEntry(r.entry, ref, private, r.data)
	default:
		return tx.PutOp(r.op, r.data)
	}
}

func (ix *Index) applyNotes(tx *cache.Tx, tip gitstore.Hash, changes []gitstore.Change, problem func(string, gitstore.Hash, error) error) error {
	author, when, err := ix.Log.CommitInfo(tip)
	if err != nil {
		return problem("(ref)", tip, err)
	}
	for _, ch := range changes {
		if err := tx.ClearProblem(gitstore.NotesRef, ch.Path); err != nil {
			return err
		}
		sha := strings.ReplaceAll(ch.Path, "/", "")
		if len(sha) != 40 || strings.Trim(sha, "0123456789abcdef") != "" {
			if err := problem(ch.Path, ch.Hash, errors.New("not a note (path is not a commit id)")); err != nil {
				return err
			}
			continue
		}
		if ch.Deleted {
			if err := tx.DeleteEntry(memory.NoteID(sha)); err != nil {
				return err
			}
			continue
		}
		data, err := ix.Log.ReadBlob(ch.Hash, memory.MaxDocumentBytes)
		if err == nil && !utf8.Valid(data) {
			err = errors.New("note is not valid UTF-8")
		}
		if err != nil {
			// The note was replaced by one that cannot be read (over the
			// size limit, not UTF-8): the old text must not stay
			// searchable as if it were still the note.
			if err := tx.DeleteEntry(memory.NoteID(sha)); err != nil {
				return err
			}
			if err := problem(ch.Path, ch.Hash, err); err != nil {
				return err
			}
			continue
		}
		if err := tx.PutNote(sha, strings.TrimSpace(string(data)), author, when.UnixNano()); err != nil {
			return err
		}
	}
	return nil
}

// Appended indexes in tx, by put, what was just appended to ref as commit
// on parent, without reading the log, when tx indexes ref at parent; else
// it returns ErrMoved and the caller updates from the refs instead.
func Appended(tx *cache.Tx, ref string, parent, commit gitstore.Hash, put func(*cache.Tx) error) error {
	tips, err := tx.Tips()
	if err != nil {
		return err
	}
	at := ""
	if !parent.IsZero() {
		at = parent.String()
	}
	if tips[ref] != at {
		return ErrMoved
	}
	if err := put(tx); err != nil {
		return err
	}
	return tx.SetTip(ref, commit.String())
}

// ErrMoved is Appended's answer when the cache does not index the ref at
// the appended commit's parent.
var ErrMoved = errors.New("the cache moved meanwhile")

func (ix *Index) warnf(format string, args ...any) {
	if ix.Warnf != nil {
		ix.Warnf(format, args...)
	}
}
