package app

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/notes"
)

// memoryRefs are the refs whose memory the cache indexes, by tip.
func (s *core) memoryRefs() (local, tracking map[string]gitstore.Hash, err error) {
	all, err := s.log.Refs(sharedPrefix, privatePrefix, subPrefix, gitstore.NotesRef, remotePrefix)
	if err != nil {
		return nil, nil, err
	}
	local, tracking = map[string]gitstore.Hash{}, map[string]gitstore.Hash{}
	for ref, h := range all {
		switch {
		case ref == gitstore.NotesRef || strings.HasPrefix(ref, sharedPrefix) || strings.HasPrefix(ref, privatePrefix) || strings.HasPrefix(ref, subPrefix):
			local[ref] = h
		case strings.HasPrefix(ref, remotePrefix):
			if _, ok := trackedLocal(ref); ok {
				tracking[ref] = h
			}
		}
	}
	return local, tracking, nil
}

// trackingRef is the remote-tracking ref that remote's copy of local memory
// ref is fetched into (the inverse of trackedLocal): refs/synaptic/X →
// refs/remotes/R/synaptic/X, refs/notes/synaptic →
// refs/remotes/R/notes/synaptic.
func trackingRef(remote, local string) string {
	return remotePrefix + remote + "/" + strings.TrimPrefix(local, "refs/")
}

// trackedLocal maps a remote-tracking memory ref to the local ref it merges
// into: refs/remotes/R/synaptic/X → refs/synaptic/X and
// refs/remotes/R/notes/synaptic → refs/notes/synaptic.
func trackedLocal(ref string) (string, bool) {
	rest := strings.TrimPrefix(ref, remotePrefix)
	i := strings.IndexByte(rest, '/')
	if i < 0 {
		return "", false
	}
	rest = rest[i+1:]
	switch {
	case strings.HasPrefix(rest, "synaptic/"):
		return "refs/" + rest, true
	case rest == "notes/synaptic":
		return gitstore.NotesRef, true
	}
	return "", false
}

const mergedKey = "merged:"

// mergeFetched merges memory that a plain `git fetch` brought into the
// remote-tracking refs since the last command into the local memory refs,
// so it is visible without a sync: it writes refs, and reports whether it
// merged any. The cache remembers what it merged, so this costs nothing
// when nothing arrived; a merge that fails is warned about and not tried
// again for the same tip.
func (s *core) mergeFetched(ctx context.Context, c *cache.Cache, tracking map[string]gitstore.Hash) (moved bool, err error) {
	for ref, h := range tracking {
		done, err := c.Meta(ctx, mergedKey+ref)
		if err != nil {
			return moved, err
		}
		if done == h.String() {
			continue
		}
		local, _ := trackedLocal(ref)
		if _, err := s.mergeRef(ctx, local, h); err != nil {
			s.warnf("cannot merge %s into %s: %v", ref, local, err)
		} else {
			moved = true
		}
		if err := c.SetMeta(ctx, mergedKey+ref, h.String()); err != nil {
			return moved, err
		}
	}
	return moved, nil
}

func (s *core) mergeRef(ctx context.Context, local string, h gitstore.Hash) (gitstore.MergeResult, error) {
	if local == gitstore.NotesRef {
		return s.repo.MergeNotes(ctx, h)
	}
	before, err := s.log.Tip(local)
	if err != nil {
		return "", err
	}
	res, _, err := s.repo.MergeInto(ctx, local, h, s.sig(ctx))
	if err != nil || res == gitstore.MergeUpToDate {
		return res, err
	}
	// A purge on either side: cut what its tombstones cover out of this
	// history, including operations the purging clone never saw.
	_, err = s.applyTombstones(ctx, local, before, h)
	return res, err
}

// indexRefs brings the cache up to the local memory refs, writing nothing
// else: for each ref whose tip moved, only the files that changed between
// the indexed tip and the new one are read. Anything unreadable is
// recorded as a problem, warned about once, and skipped: the rest of
// memory stays usable.
func (s *core) indexRefs(ctx context.Context, c *cache.Cache, local map[string]gitstore.Hash) error {
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
		if err := s.apply(ctx, tx, stored, local); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// removeStaleLocks deletes the lock files of memory refs that a killed
// process left behind (git would refuse to update those refs), saying so.
func (s *core) removeStaleLocks() {
	for _, l := range s.repo.RemoveStaleLocks(sharedPrefix, privatePrefix, gitstore.NotesRef) {
		s.warnf("removed a stale lock %s (%s old, left by a killed process)", l.Path, l.Age.Round(time.Second))
	}
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

// apply indexes the changes from the stored tips to the current ones. A
// vanished ref, or an indexed tip whose objects are gone (history
// rewritten), needs a full rebuild, as does an index built from no ref.
func (s *core) apply(ctx context.Context, tx *cache.Tx, stored map[string]string, local map[string]gitstore.Hash) error {
	full := false
	for ref, h := range stored {
		old, err := parseHash(h)
		if err != nil || !s.repo.HasObject(old) {
			full = true
		} else if _, ok := local[ref]; !ok && !s.dropRef(tx, ref, old) {
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
			if _, err := s.repo.CommitTree(old); err != nil {
				old = gitstore.ZeroHash // the indexed tip was garbage: re-read everything
			}
		}
		p, complete, err := s.applyRef(ctx, tx, ref, old, tip)
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
			s.warnf("... and %d more unreadable memory objects (see git synaptic status)", len(problems)-shown)
			break
		}
		s.warnf("%s", p)
	}
	return nil
}

// dropRef takes the entries of a vanished subscription ref out of the
// index, reading its last indexed tip; false when that is not possible and
// the index needs a rebuild. Other refs always rebuild: their entries may
// live on in another ref.
func (s *core) dropRef(tx *cache.Tx, ref string, old gitstore.Hash) bool {
	if SubscriptionOf(ref) == "" {
		return false
	}
	changes, err := s.log.Diff(old, gitstore.ZeroHash)
	if err != nil {
		return false
	}
	for _, ch := range changes {
		kind, id := notes.PathKind(ch.Path)
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
func (s *core) applyRef(ctx context.Context, tx *cache.Tx, ref string, old, tip gitstore.Hash) (problems []string, complete bool, err error) {
	complete = true
	problem := func(path string, obj gitstore.Hash, err error) error {
		if gitstore.IsMissing(err) {
			complete = false
		}
		problems = append(problems, fmt.Sprintf("%s: %s (object %s): %v", ref, path, short(obj.String()), err))
		return tx.Problem(ref, path, obj.String(), err.Error())
	}
	changes, err := s.log.Diff(old, tip)
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
		err := s.applyNotes(tx, tip, changes, problem)
		return problems, complete, err
	}
	private := strings.HasPrefix(ref, privatePrefix)
	// Progress covers reading the changed files, then folding them into
	// the index on commit (each about half the work; a rebuild writes
	// what it reads, and folds on commit only entries with operations).
	report := s.progress
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
	reads, stop := s.readAhead(ctx, changes)
	defer stop()
	for i, ch := range changes {
		if report != nil && i%1000 == 0 {
			report(i*read/total, total)
		}
		if err := s.applyChange(ctx, tx, ref, private, ch, reads, problem); err != nil {
			return nil, false, err
		}
	}
	return problems, complete, nil
}

// applyChange indexes one changed file of ref. What cannot be read as
// memory goes to problem; only cache failures are returned.
func (s *core) applyChange(ctx context.Context, tx *cache.Tx, ref string, private bool, ch gitstore.Change, reads <-chan readChange, problem func(string, gitstore.Hash, error) error) error {
	if err := tx.ClearProblem(ref, ch.Path); err != nil {
		return err
	}
	kind, id := notes.PathKind(ch.Path)
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

func (s *core) applyNotes(tx *cache.Tx, tip gitstore.Hash, changes []gitstore.Change, problem func(string, gitstore.Hash, error) error) error {
	author, when, err := s.repo.CommitInfo(tip)
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
			if err := tx.DeleteEntry(notes.NoteID(sha)); err != nil {
				return err
			}
			continue
		}
		data, err := s.log.ReadBlob(ch.Hash, notes.MaxDocumentBytes)
		if err == nil && !utf8.Valid(data) {
			err = errors.New("note is not valid UTF-8")
		}
		if err != nil {
			// The note was replaced by one that cannot be read (over the
			// size limit, not UTF-8): the old text must not stay
			// searchable as if it were still the note.
			if err := tx.DeleteEntry(notes.NoteID(sha)); err != nil {
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

// Reindex deletes the cache and rebuilds it from the refs. The usage
// store outlives it, and decay's verdicts are computed from it again at
// once, so that what decay had archived stays archived; so does the
// vector store, whose vectors the entries take back.
func (s *Recall) Reindex(ctx context.Context) error {
	if s.cache != nil {
		s.cache.Close()
		s.cache = nil
	}
	s.fresh = false
	if err := cache.Remove(s.cachePath()); err != nil {
		return err
	}
	if _, err := s.ready(ctx); err != nil {
		return err
	}
	if _, err := s.memory().Maintain(ctx, false); err != nil {
		return err
	}
	// The vector store survives the rebuild: the entries take their
	// vectors back now, not in the first search (40 s of it at a million
	// entries). Without a model, the first command that loads one does;
	// without a store, there is nothing to take back nor a model to load.
	if _, err := os.Stat(cache.VectorsPath(s.cachePath())); err != nil {
		return nil
	}
	m, err := s.embedder()
	if err != nil {
		return nil
	}
	return s.withCache(ctx, func(c *cache.Cache) error {
		if err := c.UseModel(ctx, m.ModelID(), m.Dim()); err != nil {
			return err
		}
		_, err := c.RestoreVectors(ctx)
		return err
	})
}
