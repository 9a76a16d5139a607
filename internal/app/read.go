package app

import (
	"context"
	"slices"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// List returns entries matching f, newest first, each marked with its
// standing against the code (Entry.Unmerged, Entry.Stale).
func (s *Recall) List(ctx context.Context, f Filter) ([]Entry, error) {
	var out []Entry
	err := s.withCache(ctx, func(c *cache.Cache) error {
		v := s.view(ctx, c)
		rows, err := c.List(ctx, v.filter(f))
		out = entriesOf(rows)
		if err == nil {
			s.markEntries(ctx, c, v, out)
		}
		return err
	})
	return out, err
}

// listChosen is List of the first n entries f lists that keep chooses by
// their briefs; only those are read whole. all reports that f listed
// fewer than its limit (none was left out for it).
func (s *Recall) listChosen(ctx context.Context, f Filter, n int, keep func(cache.Brief) bool) (out []Entry, all bool, err error) {
	err = s.withCache(ctx, func(c *cache.Cache) error {
		v := s.view(ctx, c)
		cf := v.filter(f)
		briefs, err := c.ListBriefs(ctx, cf)
		if err != nil {
			return err
		}
		all = cf.Limit <= 0 || len(briefs) < cf.Limit
		var chosen []cache.Brief
		for _, b := range briefs {
			if len(chosen) < n && keep(b) {
				chosen = append(chosen, b)
			}
		}
		rows, err := c.RowsOf(ctx, chosen)
		out = entriesOf(rows)
		if err == nil {
			s.markEntries(ctx, c, v, out)
		}
		return err
	})
	return out, all, err
}

// Detail is one entry with its operation history.
type Detail struct {
	Entry
	Ops []memory.Op `json:"ops"`
}

// Show returns the entry an id prefix names, with its history.
func (s *Recall) Show(ctx context.Context, idPrefix string) (Detail, error) {
	var d Detail
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		if d, err = detailIn(ctx, c, idPrefix); err == nil {
			s.mark(ctx, c, s.view(ctx, c), []*Entry{&d.Entry})
			s.noteUse(ctx, c, []string{d.ID}, "", true)
		}
		return err
	})
	return d, err
}

// Related is an entry with its history, the entries it links to and the
// entries that link to it.
type Related struct {
	Detail
	Links     []Entry `json:"links"`
	Backlinks []Entry `json:"backlinks"`
}

// Related returns the entry an id prefix names with its links both ways.
// Links to entries that are gone (purged) are left out.
func (s *Recall) Related(ctx context.Context, idPrefix string) (Related, error) {
	var r Related
	err := s.withCache(ctx, func(c *cache.Cache) error {
		var err error
		if r.Detail, err = detailIn(ctx, c, idPrefix); err != nil {
			return err
		}
		for _, id := range r.RelatedIDs {
			if x, err := c.Get(ctx, id); err == nil {
				r.Links = append(r.Links, entryOf(x))
			}
		}
		back, err := c.Backlinks(ctx, r.ID)
		r.Backlinks = entriesOf(back)
		if err == nil {
			s.noteUse(ctx, c, []string{r.ID}, "", true)
			ids := make([]string, len(r.Links))
			for i, x := range r.Links {
				ids[i] = x.ID
			}
			s.noteUse(ctx, c, ids, s.sessionID(), false)
		}
		return err
	})
	return r, err
}

// detailIn reads the entry an id prefix names, with its history, from c
// (counting no recall: writers read it too).
// Edit is one change of an entry's content, with the content before and
// after it.
type Edit struct {
	Op     memory.Op `json:"op"`
	Before string    `json:"before"`
	After  string    `json:"after"`
}

// Edits lists the changes of an entry's content, oldest first, in the
// order its operations apply.
func (s *Recall) Edits(ctx context.Context, idPrefix string) ([]Edit, error) {
	var out []Edit
	err := s.withCache(ctx, func(c *cache.Cache) error {
		d, err := detailIn(ctx, c, idPrefix)
		if err != nil {
			return err
		}
		orig, err := c.Original(ctx, d.ID)
		if err != nil {
			return err
		}
		ops := slices.Clone(d.Ops)
		memory.SortOps(ops)
		content := orig.Content
		for _, o := range ops {
			if o.Kind == memory.OpEdit && o.Content != nil && *o.Content != content {
				out = append(out, Edit{Op: o, Before: content, After: *o.Content})
				content = *o.Content
			}
		}
		return nil
	})
	return out, err
}

func detailIn(ctx context.Context, c *cache.Cache, idPrefix string) (Detail, error) {
	id, err := c.Resolve(ctx, idPrefix)
	if err != nil {
		return Detail{}, err
	}
	var d Detail
	r, err := c.Get(ctx, id)
	if err != nil {
		return d, err
	}
	d.Entry = entryOf(r)
	d.Ops, err = c.Ops(ctx, id)
	return d, err
}
