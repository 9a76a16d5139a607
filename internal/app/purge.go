package app

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Purge removes entries for good: their files (the entry and every
// operation on it) are cut out of the memory ref's whole history, and a
// tombstone (purged/xx/<id>.json, naming the removed paths and nothing of
// their content) is committed in their place. Every clone that merges the
// tombstone cuts the same paths out of its own history (see mergeRef), and
// sync then force-pushes (with a lease) so that remotes lose them too.
// Objects stay in .git/objects until git gc prunes them. Use archive
// (delete) for anything that may stay in history; purge is for content
// that must not.
//
// Entries derived from a purged one go with it, since they carry its
// text: a session handoff that quotes it among its learnings (in any
// version), and a rule accepted from it as a correction that kept its
// wording.
func (s *Memory) Purge(ctx context.Context, idPrefixes []string) ([]memory.Tombstone, error) {
	byRef := map[string][]memory.Tombstone{}
	by := s.identity(ctx)
	var details []Detail
	seen := map[string]bool{}
	for _, p := range idPrefixes {
		var d Detail
		err := s.withCache(ctx, func(c *cache.Cache) error {
			var err error
			d, err = detailIn(ctx, c, p)
			return err
		})
		if err != nil {
			return nil, err
		}
		if !seen[d.ID] {
			seen[d.ID] = true
			details = append(details, d)
		}
	}
	derived, err := s.quoting(ctx, details)
	if err != nil {
		return nil, err
	}
	for _, d := range derived {
		if !seen[d.ID] {
			seen[d.ID] = true
			details = append(details, d)
		}
	}
	for _, d := range details {
		id, row, ops := d.ID, d.Entry, d.Ops
		if row.Source != SharedRef && row.Source != PrivateRef {
			return nil, Invalidf("%s is %s, not a memory entry (purge removes saved entries)", ShortID(id), row.Source)
		}
		t := memory.Tombstone{V: memory.FormatVersion, ID: id, Paths: []string{memory.EntryPath(id)}, By: by, At: s.now().UTC()}
		for _, o := range ops {
			t.Paths = append(t.Paths, memory.OpPath(o.ID))
		}
		byRef[row.Source] = append(byRef[row.Source], t)
	}
	var out []memory.Tombstone
	refs := make([]string, 0, len(byRef))
	for ref := range byRef {
		refs = append(refs, ref)
	}
	sort.Strings(refs)
	for _, ref := range refs {
		drop := map[string]bool{}
		var files []gitstore.File
		var ids []string
		for _, t := range byRef[ref] {
			for _, p := range t.Paths {
				drop[p] = true
			}
			doc, _ := json.Marshal(t)
			files = append(files, gitstore.File{Path: memory.PurgedPath(t.ID), Data: append(doc, '\n')})
			ids = append(ids, ShortID(t.ID))
		}
		msg := "purge " + strings.Join(ids, " ")
		if _, _, err := s.repo.Rewrite(ctx, ref, drop, scrubMessages(byRef[ref]), files, s.sig(ctx), msg); err != nil {
			return out, fmt.Errorf("purge: %w", err)
		}
		if err := s.expireReflogs(ctx, ref); err != nil {
			return out, fmt.Errorf("purge: %w", err)
		}
		out = append(out, byRef[ref]...)
	}
	s.conn.refsMoved()
	_, err = s.ready(ctx) // re-index now: the entries leave the cache
	return out, err
}

// quoting lists the entries that carry the text of one of purged: session
// handoffs naming it among their learnings ("- [id] ..."), now or in an
// earlier version, and rules accepted from it that kept its wording.
func (s *Memory) quoting(ctx context.Context, purged []Detail) ([]Detail, error) {
	if len(purged) == 0 {
		return nil, nil
	}
	rows, err := s.recall().List(ctx, Filter{Types: []memory.Type{memory.TypeHandoff, memory.TypeRule}, IncludeArchived: true})
	if err != nil {
		return nil, err
	}
	var out []Detail
	for _, r := range rows {
		var d Detail
		if err := s.withCache(ctx, func(c *cache.Cache) error {
			var err error
			d, err = detailIn(ctx, c, r.ID)
			return err
		}); err != nil {
			return nil, err
		}
		texts := []string{d.Content}
		if orig, err := s.original(ctx, d.ID); err == nil {
			texts = append(texts, orig)
		}
		for _, o := range d.Ops {
			if o.Content != nil {
				texts = append(texts, *o.Content)
			}
		}
		for _, p := range purged {
			if p.ID != d.ID && quotes(d, texts, p) {
				out = append(out, d)
				break
			}
		}
	}
	return out, nil
}

// quotes reports whether derived entry d (its texts, every version)
// carries purged entry p's text.
func quotes(d Detail, texts []string, p Detail) bool {
	first := FirstLine(p.Content, 160)
	for _, t := range texts {
		switch d.Type {
		case memory.TypeHandoff:
			if strings.Contains(t, "["+ShortID(p.ID)+"]") {
				return true
			}
		case memory.TypeRule:
			if slices.Contains(d.RelatedIDs, p.ID) && first != "" && strings.Contains(t, first) {
				return true
			}
		}
	}
	return false
}

// original is entry id's content as first saved, before any edit.
func (s *core) original(ctx context.Context, id string) (string, error) {
	var e memory.Entry
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		e, err = c.Original(ctx, id)
		return err
	})
	return e.Content, err
}

// applyTombstones cuts what the tombstones in ref's tree cover out of
// ref's history when the tree still holds any of it (a merge brought it
// back from a clone that had not seen the purge): the paths they name,
// and any operation on a purged entry that arrived from one of the sides
// merged (commits whose tips are given), since a clone may have edited
// the entry before it heard of the purge. It reports whether it rewrote.
func (s *core) applyTombstones(ctx context.Context, ref string, sides ...gitstore.Hash) (bool, error) {
	tip, err := s.log.Tip(ref)
	if err != nil || tip.IsZero() {
		return false, err
	}
	stones, err := s.repo.FilesUnder(tip, memory.PurgedDir)
	if err != nil || len(stones) == 0 {
		return false, err
	}
	drop := map[string]bool{}
	purged := map[string]bool{}
	var applied []memory.Tombstone
	for path, h := range stones {
		kind, id := memory.PathKind(path)
		if kind != "purged" {
			continue
		}
		data, err := s.log.ReadBlob(h, memory.MaxDocumentBytes)
		if err != nil {
			continue
		}
		t, err := memory.DecodeTombstone(data, id)
		if err != nil {
			s.warnf("skipped tombstone %s: %v", path, err)
			continue
		}
		purged[t.ID] = true
		for _, p := range t.Paths {
			if s.repo.HasPath(tip, p) {
				drop[p] = true
			}
		}
		applied = append(applied, t)
	}
	if len(purged) == 0 {
		return false, nil
	}
	// Operations that either side added relative to the merge: the only
	// place where one the tombstone does not name can come from.
	for _, side := range sides {
		changes, err := s.log.Diff(side, tip)
		if err != nil {
			return false, err
		}
		for _, ch := range changes {
			if kind, id := memory.PathKind(ch.Path); ch.Deleted || kind != "op" || drop[ch.Path] {
				continue
			} else if data, err := s.log.ReadBlob(ch.Hash, memory.MaxDocumentBytes); err == nil {
				if op, err := memory.DecodeOp(data, id); err == nil && purged[op.Entry] {
					drop[ch.Path] = true
				}
			}
		}
	}
	if len(drop) == 0 {
		return false, nil
	}
	if _, _, err = s.repo.Rewrite(ctx, ref, drop, scrubMessages(applied), nil, s.sig(ctx), ""); err != nil {
		return false, err
	}
	return true, s.expireReflogs(ctx, ref)
}

// expireReflogs empties the reflogs of ref and of its remote-tracking refs,
// which would otherwise keep purged text reachable (git fetch and
// update-ref log remote-tracking refs).
func (s *core) expireReflogs(ctx context.Context, ref string) error {
	refs := []string{ref}
	tracking, err := s.log.Refs(remotePrefix)
	if err != nil {
		return err
	}
	for t := range tracking {
		if local, ok := trackedLocal(t); ok && local == ref {
			refs = append(refs, t)
		}
	}
	sort.Strings(refs)
	return s.repo.ExpireReflogs(ctx, refs...)
}

// scrubMessages cuts commit messages that name a purged entry down to their
// first line: a save's message carries the first line of its content.
func scrubMessages(stones []memory.Tombstone) func(string) string {
	return func(msg string) string {
		for _, t := range stones {
			if strings.Contains(msg, t.ID) {
				first, _, _ := strings.Cut(msg, "\n")
				return first + "\n"
			}
		}
		return msg
	}
}
