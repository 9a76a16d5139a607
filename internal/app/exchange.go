package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/memory"
)

// ImportItem is one entry to import, perhaps one that an export wrote and
// a person edited: ID names the entry it was exported from and Updated
// when that entry last changed before the export. For an entry found by
// ID, an empty Type or Tier keeps the entry's.
type ImportItem struct {
	SaveRequest
	ID      string
	Updated time.Time
}

// ImportReport says what an import did: the ids of new and of updated
// entries, and how many it left as they were.
type ImportReport struct {
	New       []string `json:"new"`
	Updated   []string `json:"updated"`
	Unchanged int      `json:"unchanged"`
}

// ImportItems imports items. One whose ID names an entry of this
// repository has what differs (content, type, tags, tier, pin) applied to
// that entry as edits, so an export edited in a text editor comes back
// without duplicates and with its history; the others are saved as new
// entries in one commit (Import). Everything is checked before anything is
// written: an entry that changed here since it was exported, or whose
// privacy the item flips, refuses the whole import.
func (s *Memory) ImportItems(ctx context.Context, items []ImportItem, opt ImportOptions) (ImportReport, error) {
	var rep ImportReport
	var known map[string]bool
	if opt.SkipKnownText {
		var err error
		if known, err = s.knownTexts(ctx); err != nil {
			return rep, err
		}
	}
	var fresh []SaveRequest
	type change struct {
		item ImportItem
		edit EditRequest
		cur  Entry
	}
	var changes []change
	current, err := s.exported(ctx, items)
	if err != nil {
		return rep, err
	}
	for i, it := range items {
		// compared normalized; saved and secret-checked as given
		tags, err := memory.NormalizeTags(it.Tags)
		if err != nil {
			return rep, fmt.Errorf("entry %d: %w", i+1, err)
		}
		cur, found := current[it.ID]
		if !found {
			if known[textKey(it.Type, it.Content)] {
				rep.Unchanged++
				continue
			}
			it.Private = it.Private || opt.NewPrivate
			fresh = append(fresh, it.SaveRequest)
			continue
		}
		if !differs(it, tags, cur) {
			rep.Unchanged++
			continue
		}
		edit := returnEdit(it, tags, cur)
		if err := s.checkReturn(it, edit, cur); err != nil {
			return rep, fmt.Errorf("entry %d (%s): %w", i+1, short(cur.ID), err)
		}
		changes = append(changes, change{it, edit, cur})
	}
	if len(fresh) > 0 {
		ents, err := s.Import(ctx, fresh)
		if err != nil {
			return rep, err
		}
		for _, e := range ents {
			rep.New = append(rep.New, e.ID)
		}
	}
	for _, c := range changes {
		if err := s.applyReturn(ctx, c.item, c.edit, c.cur); err != nil {
			return rep, fmt.Errorf("update %s (%d of %d updates written): %w", short(c.cur.ID), len(rep.Updated), len(changes), err)
		}
		rep.Updated = append(rep.Updated, c.cur.ID)
	}
	return rep, nil
}

// ImportOptions adjust ImportItems.
type ImportOptions struct {
	// NewPrivate puts every new entry in private memory.
	NewPrivate bool
	// SkipKnownText leaves out a new entry whose type and text an entry
	// here already has, so that importing files a person wrote (which
	// carry no id) twice adds nothing the second time.
	SkipKnownText bool
}

// knownTexts are the type and text of every memory entry, archived and
// private ones included, as textKey spells them.
func (s *Memory) knownTexts(ctx context.Context) (map[string]bool, error) {
	f, err := ParseFilter(FilterSpec{Types: MemoryTypes(), IncludeArchived: true}, s.now())
	if err != nil {
		return nil, err
	}
	rows, err := s.recall().List(ctx, f)
	if err != nil {
		return nil, err
	}
	known := make(map[string]bool, len(rows))
	for _, r := range rows {
		known[textKey(r.Type, r.Content)] = true
	}
	return known, nil
}

func textKey(t memory.Type, content string) string {
	if t == "" {
		t = memory.TypeInsight
	}
	return string(t) + "\x00" + strings.TrimSpace(content)
}

// MemoryTypes names the types of memory entries (what a person or agent
// saves; not indexed commits or notes on commits).
func MemoryTypes() []string {
	out := make([]string, len(memory.SavableTypes))
	for i, t := range memory.SavableTypes {
		out[i] = string(t)
	}
	return out
}

// EntryTypes are the types an entry listed or searched may have: the
// memory types, then commit notes and indexed commits.
func EntryTypes() []string {
	return append(MemoryTypes(), string(memory.TypeNote), string(memory.TypeGitCommit))
}

// Tiers are the memory tiers, shortest-lived first.
func Tiers() []string {
	return []string{string(memory.TierEphemeral), string(memory.TierWorking), string(memory.TierLongterm)}
}

// exported finds the memory entries the items' ids name exactly, in one
// pass over the cache (commits and notes are not imported into).
func (s *Memory) exported(ctx context.Context, items []ImportItem) (map[string]Entry, error) {
	found := map[string]Entry{}
	err := s.withCache(ctx, func(c *cache.Cache) error {
		for _, it := range items {
			if len(it.ID) != 32 {
				continue
			}
			r, err := c.Get(ctx, it.ID)
			if errors.Is(err, ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if e := entryOf(r); slices.Contains(memory.SavableTypes, e.Type) {
				found[it.ID] = e
			}
		}
		return nil
	})
	return found, err
}

// differs reports whether it, with its tags normalized as tags, would
// change cur.
func differs(it ImportItem, tags []string, cur Entry) bool {
	return strings.TrimSpace(it.Content) != strings.TrimSpace(cur.Content) || it.Type != "" && it.Type != cur.Type ||
		it.Tier != "" && it.Tier != cur.Tier || it.Pinned != cur.Pinned || it.Private != cur.Private || !sameSet(tags, cur.Tags)
}

// returnEdit is the edit that gives cur the item's content, type and tags
// (tags: its tags normalized). Added tags keep the spelling they were
// given, so that the secret check reads them as written.
func returnEdit(it ImportItem, tags []string, cur Entry) EditRequest {
	req := EditRequest{AllowSecret: it.AllowSecret}
	if strings.TrimSpace(it.Content) != strings.TrimSpace(cur.Content) {
		req.Content = &it.Content
	}
	if it.Type != "" && it.Type != cur.Type {
		req.Type = it.Type
	}
	for _, given := range it.Tags {
		if t, _ := memory.NormalizeTags([]string{given}); len(t) == 1 && !slices.Contains(cur.Tags, t[0]) {
			req.AddTags = append(req.AddTags, given)
		}
	}
	for _, t := range cur.Tags {
		if !slices.Contains(tags, t) {
			req.RemoveTags = append(req.RemoveTags, t)
		}
	}
	return req
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

// checkReturn refuses an update that would lose or leak something: the
// entry changed since the export, or the item moves it between private
// and shared memory. Content and added tags are checked as a save and an
// edit check them.
func (s *Memory) checkReturn(it ImportItem, edit EditRequest, cur Entry) error {
	if !it.Updated.IsZero() && cur.Updated.After(it.Updated) {
		return memory.Invalidf("it changed here on %s, after it was exported; export again and redo the edit, or remove its id to save it as a new entry", cur.Updated.Local().Format(time.DateTime))
	}
	if it.Private != cur.Private {
		where := map[bool]string{true: "private", false: "shared"}
		return memory.Invalidf("the entry is %s and cannot become %s by import (archive it and save a %s copy)", where[cur.Private], where[it.Private], where[it.Private])
	}
	if err := memory.ValidateContent(it.Content); err != nil {
		return err
	}
	if cur.Private {
		return nil
	}
	if edit.Content != nil {
		if err := s.checkShareable([]secrets.Field{{Name: "content", Text: *edit.Content}}, it.AllowSecret, "shared memory is pushed to your remotes: remove the secret, or import with --private"); err != nil {
			return err
		}
	}
	return s.checkAsGiven("tag", edit.AddTags, it.AllowSecret)
}

// applyReturn writes edit, and the tier and pin it asks for, on cur.
func (s *Memory) applyReturn(ctx context.Context, it ImportItem, edit EditRequest, cur Entry) error {
	if edit.Content != nil || edit.Type != "" || len(edit.AddTags)+len(edit.RemoveTags) > 0 {
		if _, err := s.Edit(ctx, cur.ID, edit); err != nil {
			return err
		}
	}
	if it.Tier != "" && it.Tier != cur.Tier {
		if _, err := s.SetTier(ctx, cur.ID, it.Tier); err != nil {
			return err
		}
	}
	if it.Pinned != cur.Pinned {
		if _, err := s.SetPinned(ctx, cur.ID, it.Pinned); err != nil {
			return err
		}
	}
	return nil
}
