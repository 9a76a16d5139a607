package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Operations on entries: edits, pins, archives, tiers and relevance
// feedback, each an operation document beside the entry (memory.Op).

// EditRequest changes an entry; nil/empty fields stay as they are.
type EditRequest struct {
	Content     *string
	Type        memory.Type
	AddTags     []string
	RemoveTags  []string
	AllowSecret bool
}

// Edit records an edit operation on an entry; the original stays in history.
func (s *Memory) Edit(ctx context.Context, idPrefix string, req EditRequest) (memory.Op, error) {
	op := memory.Op{Kind: memory.OpEdit, Content: req.Content, Type: req.Type}
	var err error
	if op.AddTags, err = memory.NormalizeTags(req.AddTags); err != nil {
		return op, err
	}
	if op.RemoveTags, err = memory.NormalizeTags(req.RemoveTags); err != nil {
		return op, err
	}
	if req.Type != "" {
		if _, err := memory.ParseType(string(req.Type)); err != nil {
			return op, badRequest(err)
		}
	}
	return s.recordIf(ctx, idPrefix, op, req.AllowSecret, func(e Entry) error {
		if e.Private {
			return nil
		}
		return s.checkAsGiven("tag", req.AddTags, req.AllowSecret)
	})
}

// SetPinned pins or unpins an entry.
func (s *Memory) SetPinned(ctx context.Context, idPrefix string, pinned bool) (memory.Op, error) {
	kind := memory.OpUnpin
	if pinned {
		kind = memory.OpPin
	}
	return s.record(ctx, idPrefix, memory.Op{Kind: kind}, false)
}

// ArchiveUnpinned archives the entry idPrefix names unless it is pinned
// (ErrPinned): a pin is the user's word, so an agent's archive leaves it.
func (s *Memory) ArchiveUnpinned(ctx context.Context, idPrefix string) (memory.Op, error) {
	return s.recordIf(ctx, idPrefix, memory.Op{Kind: memory.OpArchive}, false, func(e Entry) error {
		if e.Pinned {
			return fmt.Errorf("%w: %s", ErrPinned, short(e.ID))
		}
		return nil
	})
}

// SetArchived archives or restores an entry. Nothing is deleted: the entry
// stays in the ref's history and --include-archived shows it.
func (s *Memory) SetArchived(ctx context.Context, idPrefix string, archived bool) (memory.Op, error) {
	kind := memory.OpUnarchive
	if archived {
		kind = memory.OpArchive
	}
	return s.record(ctx, idPrefix, memory.Op{Kind: kind}, false)
}

// SetTier sets an entry's tier explicitly.
func (s *Memory) SetTier(ctx context.Context, idPrefix string, tier memory.Tier) (memory.Op, error) {
	if _, err := memory.ParseTier(string(tier)); err != nil {
		return memory.Op{}, badRequest(err)
	}
	return s.record(ctx, idPrefix, memory.Op{Kind: memory.OpTier, Tier: tier}, false)
}

// record writes op on the entry idPrefix names, to the ref that holds it.
func (s *core) record(ctx context.Context, idPrefix string, op memory.Op, allowSecret bool) (memory.Op, error) {
	return s.recordIf(ctx, idPrefix, op, allowSecret, nil)
}

// recordIf is record when the entry passes check (nil: any entry).
func (s *core) recordIf(ctx context.Context, idPrefix string, op memory.Op, allowSecret bool, check func(Entry) error) (memory.Op, error) {
	author, err := s.author(ctx)
	if err != nil {
		return op, err
	}
	var d Detail
	err = s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		d, err = detailIn(ctx, c, idPrefix)
		return err
	})
	if err != nil {
		return op, err
	}
	row, prior := d.Entry, d.Ops
	if check != nil {
		if err := check(row); err != nil {
			return op, err
		}
	}
	ref, err := refFor(row)
	if err != nil {
		return op, err
	}
	if op.Kind == memory.OpEdit || op.Kind == memory.OpRelevant {
		// a person or agent vouched for the entry against this code
		content := row.Content
		if op.Content != nil {
			content = *op.Content
		}
		op.Anchor, op.Files = s.anchorFiles(ctx, content, nil)
	}
	op, doc, err := s.stamp(op, row.ID, prior, author)
	if err != nil {
		return op, err
	}
	return op, s.writeOps(ctx, ref, []memory.Op{op}, [][]byte{doc}, author, allowSecret)
}

// stamp makes op the next operation on the entry id (whose operations so
// far are prior), by author, now, and encodes it.
func (s *core) stamp(op memory.Op, id string, prior []memory.Op, author string) (memory.Op, []byte, error) {
	op.V, op.ID, op.Entry, op.Author = memory.FormatVersion, memory.NewID(), id, author
	op.Clock, op.At = memory.NextClock(prior), s.now().UTC()
	doc, err := memory.EncodeOp(op)
	return op, doc, err
}

// writeOps commits the stamped ops (of one kind; docs their encodings) to
// ref in one commit and indexes them.
func (s *core) writeOps(ctx context.Context, ref string, ops []memory.Op, docs [][]byte, author string, allowSecret bool) error {
	files := make([]gitstore.File, len(ops))
	for i, o := range ops {
		files[i] = gitstore.File{Path: memory.OpPath(o.ID), Data: docs[i]}
	}
	msg := fmt.Sprintf("%s %s", ops[0].Kind, ops[0].Entry)
	if len(ops) > 1 {
		msg = fmt.Sprintf("%s %d entries", ops[0].Kind, len(ops))
	}
	commit, parent, err := s.appendDocs(ctx, ref, files, author, msg, allowSecret)
	if err != nil {
		return fmt.Errorf("%s: %w", ops[0].Kind, err)
	}
	s.indexWritten(ctx, ref, parent, commit, func(tx *cache.Tx) error {
		for i, o := range ops {
			if err := tx.PutOp(o, docs[i]); err != nil {
				return err
			}
		}
		return nil
	})
	return nil
}

// recordEach writes op on each of the entries ids name, in one commit per
// ref, and returns the ids it wrote. An entry it cannot write (unknown,
// read-only) is left out and named in the error; the others are written.
func (s *core) recordEach(ctx context.Context, ids []string, op memory.Op) ([]string, error) {
	author, err := s.author(ctx)
	if err != nil {
		return nil, err
	}
	type batch struct {
		ops  []memory.Op
		docs [][]byte
	}
	byRef := map[string]*batch{}
	var refs []string
	var problems []error
	err = s.withCache(ctx, func(c *cache.Cache) error {
		for _, id := range ids {
			d, err := detailIn(ctx, c, id)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			ref, err := refFor(d.Entry)
			if err != nil {
				problems = append(problems, err)
				continue
			}
			o, doc, err := s.stamp(op, d.ID, d.Ops, author)
			if err != nil {
				return err
			}
			b := byRef[ref]
			if b == nil {
				b = &batch{}
				byRef[ref] = b
				refs = append(refs, ref)
			}
			b.ops, b.docs = append(b.ops, o), append(b.docs, doc)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	var done []string
	for _, ref := range refs {
		b := byRef[ref]
		if err := s.writeOps(ctx, ref, b.ops, b.docs, author, false); err != nil {
			return done, errors.Join(append(problems, err)...)
		}
		for _, o := range b.ops {
			done = append(done, o.Entry)
		}
	}
	return done, errors.Join(problems...)
}

// Feedback records relevance feedback on an entry: relevant with a score
// in (0,1] (it ranks higher in search, counts as activity so it does not
// decay, and above 0.8 is always shown in full to agents), or irrelevant
// (it ranks lower and is left out of agents' context). Feedback is
// authored, so it is shared with the rest of the memory.
func (s *Memory) Feedback(ctx context.Context, idPrefix string, relevant bool, score float64, reason, objective string) (memory.Op, error) {
	op := memory.Op{Kind: memory.OpIrrelevant, Reason: reason, Objective: objective}
	if relevant {
		op.Kind, op.Score = memory.OpRelevant, score
	}
	op, err := s.record(ctx, idPrefix, op, false)
	if err == nil && relevant {
		// shown afresh: in full again in every session (the NPL seed)
		if c, cerr := s.openCache(); cerr == nil {
			if cerr := c.ResetInjections(ctx, op.Entry); cerr != nil {
				s.warnf("relevant %s: %v", short(op.Entry), cerr)
			}
		}
	}
	return op, err
}
