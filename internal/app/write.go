package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/memory"
)

// SaveRequest is a new memory entry.
type SaveRequest struct {
	// ID, when set, is the new entry's id (32 lowercase hex digits),
	// chosen by the caller so that a save tried again after it may have
	// run (the warm process ended under it) saves once: SaveLinked then
	// returns the entry already saved under that id.
	ID          string
	Content     string
	Type        memory.Type
	Tags        []string
	Tier        memory.Tier // "" = by type
	Pinned      bool
	Private     bool // stored in private memory (PrivateRef), never pushed
	AllowSecret bool // store content that looks like a credential anyway
	Related     []string
	// Duplicates are full ids of near-duplicates found just before the
	// save; they are linked like Related but not looked up again (a
	// concurrent writer may be rebuilding the cache).
	Duplicates []string
	SessionID  string // "" = Options.Session
	AgentID    string // "" = Options.Agent
	Created    time.Time
	// Anchor is the commit the entry was written on and Branch its
	// branch ("": HEAD and the branch checked out), for memory brought
	// from elsewhere; the files it names are read at Anchor.
	Anchor, Branch string
	// Unanchored saves without an anchor: memory for another repository
	// (save --to), where this one's commits mean nothing.
	Unanchored bool
}

// Saved is what SaveLinked did: the entry, the near-duplicates it found
// (reported, never dropped; Linked says which the entry links to), and,
// for an issue that forms or joins a recurring pattern, that pattern.
type Saved struct {
	Entry      memory.Entry
	Duplicates []Similar
	Pattern    *Group
}

// Linked reports whether the saved entry links to the entry id: every
// near-duplicate but one in private memory when the entry is shared (the
// link would push the private id).
func (s Saved) Linked(id string) bool { return slices.Contains(s.Entry.RelatedIDs, id) }

// SaveLinked looks for near-duplicates of req's content (by), then saves
// req linked to them. A failed lookup saves without links. An issue saved
// with the model at hand (ByMeaning) is also matched against the
// recurring patterns.
func (s *Memory) SaveLinked(ctx context.Context, req SaveRequest, by Likeness) (Saved, error) {
	if req.ID != "" {
		if e, found, err := s.savedAs(ctx, req); found || err != nil {
			return Saved{Entry: e}, err
		}
	}
	if req.ID == "" {
		req.ID = memory.NewID()
	}
	// the entry's directory is read while its near-duplicates are looked
	// for: its content embedded, or its words looked up
	dups, vec, _ := s.recall().nearDuplicates(ctx, req.Content, by, func() { s.readAhead(req) })
	for _, d := range dups {
		req.Duplicates = append(req.Duplicates, d.ID)
	}
	e, err := s.Save(ctx, req)
	if err != nil {
		return Saved{}, err
	}
	if vec != nil && e.Content == req.Content { // the text embedded is the entry's
		s.keepVector(ctx, e.Content, vec)
	}
	saved := Saved{Entry: e, Duplicates: dups}
	if by == ByMeaning && e.Type == memory.TypeIssue {
		groups, _ := s.Patterns(ctx) // needs the model; without it, no pattern
		for i, g := range groups {
			if slices.ContainsFunc(g.Entries, func(x Entry) bool { return x.ID == e.ID }) {
				saved.Pattern = &groups[i]
				saved.Entry.Tier = memory.TierLongterm
			}
		}
	}
	return saved, nil
}

// readAhead reads what a save of req will change in memory's tree, where
// the log can (gitstore.Repo.ReadAhead).
func (s *Memory) readAhead(req SaveRequest) {
	if r, ok := s.log.(interface{ ReadAhead(ref, path string) }); ok {
		r.ReadAhead(req.ref(), memory.EntryPath(req.ID))
	}
}

// ReadTrees reads up to n more of memory's trees, shared then private,
// into the repository's tree cache, where the log keeps one
// (gitstore.Repo.ReadTrees), and reports whether more are left. The warm
// process does it between requests: a save at a million entries then
// finds its directory of 3,900 entries read, where reading it from a pack
// took 1.8-2.3 ms of the save.
func (s *Memory) ReadTrees(n int) (more bool) {
	r, ok := s.log.(interface{ ReadTrees(ref string, n int) bool })
	return ok && (r.ReadTrees(SharedRef, n) || r.ReadTrees(PrivateRef, n))
}

// ref is the memory ref req is saved to.
func (req SaveRequest) ref() string {
	if req.Private {
		return PrivateRef
	}
	return SharedRef
}

// savedAs returns the entry saved under req.ID, if there is one: the
// save req asks for has been done. An entry of other content under that
// id is an error. (An id of another shape is none: newEntry refuses it.)
func (s *Memory) savedAs(ctx context.Context, req SaveRequest) (e memory.Entry, found bool, err error) {
	err = s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		e, err = c.Original(ctx, req.ID)
		return err
	})
	switch {
	case errors.Is(err, cache.ErrNotFound):
		return memory.Entry{}, false, nil
	case err != nil:
		return e, false, fmt.Errorf("save: look for entry %s: %w", ShortID(req.ID), err)
	case e.Content != req.Content:
		return e, false, Invalidf("entry id %s is taken by another entry", req.ID)
	}
	return e, true, nil
}

// keepVector stores the vector of a text just embedded for a new entry's
// near-duplicates as the vector of that entry's text, so that the next
// search takes it from the vector store instead of embedding the entry
// again (3.5 ms of an MCP save at a million entries). It is the same
// model's vector of the same text, so nothing ranks differently; a failed
// store only costs that embedding.
func (s *Memory) keepVector(ctx context.Context, text string, vec []float32) {
	_ = s.withCache(ctx, func(c *cache.Cache) error {
		return c.SaveTextVectors(ctx, []string{text}, [][]float32{vec})
	})
}

// keepPatterns makes the issues of recurring patterns longterm (the
// phase-3 seed's tiering: a recurring issue is kept, not left to decay),
// all in one commit per ref: the first session start over imported memory
// found 357 such issues, and wrote a commit for each. The tier is
// authored, so teammates keep them too; a failure only warns.
func (s *Memory) keepPatterns(ctx context.Context, groups []Group) {
	var ids []string
	for _, g := range groups {
		for _, x := range g.Entries {
			if x.Tier != memory.TierLongterm && SubscriptionOf(x.Source) == "" { // a subscription's memory is read-only here
				ids = append(ids, x.ID)
			}
		}
	}
	if len(ids) == 0 {
		return
	}
	done, err := s.recordEach(ctx, ids, memory.Op{Kind: memory.OpTier, Tier: memory.TierLongterm})
	if err != nil {
		s.warnf("could not make every recurring issue longterm: %v", err)
	}
	kept := map[string]bool{}
	for _, id := range done {
		kept[id] = true
	}
	for _, g := range groups {
		for i, x := range g.Entries {
			if kept[x.ID] {
				g.Entries[i].Tier = memory.TierLongterm
			}
		}
	}
}

// secretHint tells the user what to do instead of pushing a credential.
const secretHint = "shared memory is pushed to your remotes; remove the secret, save it with --private (kept in this clone, never pushed), or pass --allow-secret if it is not a real credential"

// newEntry builds the entry req asks for, anchored at HEAD (or
// req.Anchor) with the files it names there; ts keeps the trees read
// across calls (nil: none kept).
func (s *core) newEntry(ctx context.Context, req SaveRequest, author, project, branch string, ts trees) (memory.Entry, error) {
	if req.Type == "" {
		req.Type = memory.TypeInsight
	}
	if _, err := memory.ParseType(string(req.Type)); err != nil {
		return memory.Entry{}, badRequest(err)
	}
	if err := memory.ValidateContent(req.Content); err != nil {
		return memory.Entry{}, err
	}
	for _, f := range []struct{ name, v string }{{"session id", req.SessionID}, {"agent id", req.AgentID}} {
		if !memory.ValidName(f.v) {
			return memory.Entry{}, memory.Invalidf("%s %q must be a line of at most 256 bytes without control characters", f.name, f.v)
		}
	}
	if !req.Private {
		if err := s.checkAsGiven("tag", req.Tags, req.AllowSecret); err != nil {
			return memory.Entry{}, err
		}
	}
	tags, err := memory.NormalizeTags(req.Tags)
	if err != nil {
		return memory.Entry{}, err
	}
	created := req.Created
	if created.IsZero() {
		created = s.now()
	}
	id := req.ID
	switch {
	case id == "":
		id = memory.NewID()
	case !memory.ValidID(id):
		return memory.Entry{}, Invalidf("entry id %q must be 32 lowercase hex digits", id)
	}
	e := memory.Entry{
		V: memory.FormatVersion, ID: id, Type: req.Type, Content: req.Content, Tags: tags,
		Project: project, Branch: branch, SessionID: firstNonEmpty(req.SessionID, s.sessionID()),
		AgentID: firstNonEmpty(req.AgentID, s.per.Agent), Author: author,
		Created: created.UTC(), Tier: req.Tier, Pinned: req.Pinned,
	}
	for _, r := range req.Related {
		if !memory.ValidID(r) {
			return memory.Entry{}, Invalidf("related id %q must be a full 32-digit id", r)
		}
		e.RelatedIDs = append(e.RelatedIDs, r)
	}
	if req.Branch != "" {
		e.Branch = req.Branch
	}
	switch {
	case req.Unanchored:
	case req.Anchor != "":
		if !memory.ValidObjectID(req.Anchor) {
			return memory.Entry{}, Invalidf("anchor %q is not a full commit id", req.Anchor)
		}
		e.Anchor, e.Files = req.Anchor, s.filesAt(ctx, req.Anchor, e.Content, ts)
	default:
		e.Anchor, e.Files = s.anchorFiles(ctx, e.Content, ts)
	}
	return e, e.Validate()
}

func firstNonEmpty(a ...string) string {
	for _, s := range a {
		if s != "" {
			return s
		}
	}
	return ""
}

// Save stores a new entry and indexes it. The ref write is the commit
// point: a cache failure afterwards is only a warning.
func (s *Memory) Save(ctx context.Context, req SaveRequest) (memory.Entry, error) {
	e, doc, author, err := s.prepare(ctx, req)
	if err != nil {
		return e, err
	}
	ref := req.ref()
	msg := fmt.Sprintf("save %s %s\n\n%s", e.Type, e.ID, FirstLine(e.Content, 200))
	commit, parent, err := s.appendDocs(ctx, ref, []gitstore.File{{Path: memory.EntryPath(e.ID), Data: doc}}, author, msg, req.AllowSecret)
	if err != nil {
		return e, fmt.Errorf("save: %w", err)
	}
	s.indexWritten(ctx, ref, parent, commit, func(tx *cache.Tx) error { return tx.PutEntry(e, ref, req.Private, doc) })
	return e, nil
}

// prepare builds and encodes the entry req asks for, by the author it
// returns, with its related ids resolved.
func (s *core) prepare(ctx context.Context, req SaveRequest) (e memory.Entry, doc []byte, author string, err error) {
	if author, err = s.author(ctx); err != nil {
		return e, nil, "", err
	}
	req.Related = slices.Clone(req.Related)
	for i, r := range req.Related {
		if req.Related[i], err = s.memory().Resolve(ctx, r); err != nil {
			return e, nil, "", err
		}
	}
	for _, d := range req.Duplicates {
		// A near-duplicate found in private memory is not linked from
		// shared memory: the link would push the private id.
		if !slices.Contains(req.Related, d) && (req.Private || !s.isPrivate(ctx, d)) {
			req.Related = append(req.Related, d)
		}
	}
	if e, err = s.newEntry(ctx, req, author, s.project(ctx), s.repo.CurrentBranch(), nil); err != nil {
		return e, nil, "", err
	}
	doc, err = memory.EncodeEntry(e)
	return e, doc, author, err
}

// Import saves many entries (bulk load, benchmarks, evaluation
// corpora): the shared ones in one commit, the private ones (req.Private)
// in another. Every entry is validated and the shared ones are
// secret-checked first; nothing is written unless all pass. The shared
// commit comes first, so a refusal there writes nothing at all.
func (s *Memory) Import(ctx context.Context, reqs []SaveRequest) ([]memory.Entry, error) {
	author, err := s.author(ctx)
	if err != nil {
		return nil, err
	}
	project, branch := s.project(ctx), s.repo.CurrentBranch()
	var shared, private importBatch
	entries := make([]memory.Entry, 0, len(reqs))
	ts := trees{}
	for i, req := range reqs {
		e, err := s.newEntry(ctx, req, author, project, branch, ts)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		doc, err := memory.EncodeEntry(e)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i+1, err)
		}
		b := &shared
		if req.Private {
			b = &private
		}
		b.add(e, doc, req.AllowSecret)
		entries = append(entries, e)
	}
	if err := s.writeBatch(ctx, SharedRef, &shared, author); err != nil {
		return nil, fmt.Errorf("import: %w", err)
	}
	if err := s.writeBatch(ctx, PrivateRef, &private, author); err != nil {
		if len(shared.files) > 0 {
			return nil, fmt.Errorf("import: the %d shared entries were imported, the %d private ones were not: %w", len(shared.files), len(private.files), err)
		}
		return nil, fmt.Errorf("import: %w", err)
	}
	return entries, nil
}

// importBatch is the part of an import bound for one ref.
type importBatch struct {
	files   []gitstore.File
	entries []memory.Entry
	strict  bool // some entry does not allow secrets
}

func (b *importBatch) add(e memory.Entry, doc []byte, allowSecret bool) {
	b.strict = b.strict || !allowSecret
	b.files = append(b.files, gitstore.File{Path: memory.EntryPath(e.ID), Data: doc})
	b.entries = append(b.entries, e)
}

// writeBatch writes b to ref in one commit and indexes it.
func (s *Memory) writeBatch(ctx context.Context, ref string, b *importBatch, author string) error {
	if len(b.files) == 0 {
		return nil
	}
	commit, parent, err := s.appendDocs(ctx, ref, b.files, author, fmt.Sprintf("import %d entries", len(b.files)), !b.strict)
	if err != nil {
		return err
	}
	private := ref == PrivateRef
	s.indexWritten(ctx, ref, parent, commit, func(tx *cache.Tx) error {
		for i, e := range b.entries {
			if err := tx.PutEntry(e, ref, private, b.files[i].Data); err != nil {
				return err
			}
		}
		return nil
	})
	return nil
}

// indexWritten indexes what this process just wrote as commit (on parent)
// without diffing trees, when the cache was at parent; otherwise it falls
// back to a full refresh. The ref already holds the data, so a cache
// failure only warns.
func (s *core) indexWritten(ctx context.Context, ref string, parent, commit gitstore.Hash, put func(*cache.Tx) error) {
	err := s.inTx(ctx, func(tx *cache.Tx) error { return memlog.Appended(tx, ref, parent, commit, put) })
	if err == nil {
		s.conn.refsMoved()
		return
	}
	s.afterWrite(ctx)
}

// afterWrite indexes what was just written by refreshing from the refs;
// the ref already holds it, so a cache failure only warns (the next
// command retries).
func (s *core) afterWrite(ctx context.Context) {
	s.conn.refsMoved()
	if _, err := s.ready(ctx); err != nil {
		s.warnf("saved, but the cache could not be updated (it will catch up on the next command): %v", err)
	}
}

// Note attaches text to the commit rev names as a git note under
// refs/notes/synaptic (appended to any note already there), indexes it,
// and returns the commit's full id.
func (s *Memory) Note(ctx context.Context, rev, text string, allowSecret bool) (string, error) {
	if err := memory.ValidateContent(text); err != nil {
		return "", err
	}
	const hint = "notes are pushed to your remotes: remove the secret, or pass --allow-secret if it is not a real credential"
	if err := s.checkShareable([]secrets.Field{{Name: "note", Text: text}}, allowSecret, hint); err != nil {
		return "", err
	}
	c, err := s.repo.ResolveCommit(ctx, rev)
	if err != nil {
		return "", Invalidf("%v", err)
	}
	// Notes larger than the read limit would be skipped as garbage when
	// indexed: refuse the append that would make one.
	if n, err := s.repo.NoteSize(ctx, c); err != nil {
		return "", err
	} else if n+int64(len(text))+2 > memory.MaxDocumentBytes {
		return "", memory.Invalidf("the note of %s would grow to %d bytes, over the %d-byte limit of a note; attach a summary instead", short(c.String()), n+int64(len(text))+2, memory.MaxDocumentBytes)
	}
	if err := s.repo.AppendNote(ctx, c, text); err != nil {
		return "", err
	}
	s.afterWrite(ctx)
	return c.String(), nil
}

// Resolve expands an id prefix to a full entry id.
func (s *Memory) Resolve(ctx context.Context, prefix string) (string, error) {
	var id string
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		id, err = c.Resolve(ctx, prefix)
		return err
	})
	return id, err
}
