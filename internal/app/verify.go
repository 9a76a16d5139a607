package app

import (
	"context"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Verification is an entry read against HEAD: its marks, and for each
// file it names that changed since, the commits that changed it.
type Verification struct {
	Entry
	Changes []FileHistory `json:"changes,omitempty"`
}

// FileHistory is a file an entry names that changed: how (StaleFile),
// and the last commits that changed it, newest first.
type FileHistory struct {
	StaleFile
	Recent []FileCommit `json:"recent,omitempty"`
}

// FileCommit is a commit that changed a file.
type FileCommit struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"`
	Subject string    `json:"subject"`
}

// verifyRecent is how many commits Verify lists per changed file.
const verifyRecent = 5

// VerifyReport is what Verify found: the entries it read, and how many
// name files (the ones that can be checked).
type VerifyReport struct {
	Head    string         `json:"head"`
	Checked int            `json:"checked"`
	Stale   []Verification `json:"stale"`
	Current []Verification `json:"current,omitempty"`
}

// Verify reads memory against HEAD: the entries ids name (all of them
// reported, current or not), or every entry not archived that names
// files (only the stale ones reported).
func (s *Recall) Verify(ctx context.Context, ids []string) (VerifyReport, error) {
	var rep VerifyReport
	var rows []Entry
	err := s.withCache(ctx, func(c *cache.Cache) error {
		v := s.view(ctx, c)
		rep.Head = v.head
		if len(ids) == 0 {
			all, err := c.List(ctx, cache.Filter{})
			if err != nil {
				return err
			}
			for _, r := range all {
				if len(r.Files) > 0 {
					rows = append(rows, entryOf(r))
				}
			}
		}
		for _, id := range ids {
			d, err := detailIn(ctx, c, id)
			if err != nil {
				return err
			}
			rows = append(rows, d.Entry)
		}
		s.markEntries(ctx, c, v, rows)
		return nil
	})
	if err != nil {
		return rep, err
	}
	for _, r := range rows {
		if len(r.Files) > 0 {
			rep.Checked++
		}
		vr := Verification{Entry: r}
		for _, f := range r.Stale {
			h := FileHistory{StaleFile: f}
			if cs, err := s.repo.ChangesSince(ctx, r.Checked(), rep.Head, f.Path, verifyRecent); err == nil {
				for _, c := range cs {
					h.Recent = append(h.Recent, FileCommit{Commit: c.Commit, Time: c.Time, Subject: c.Subject})
				}
			}
			vr.Changes = append(vr.Changes, h)
		}
		switch {
		case len(r.Stale) > 0:
			rep.Stale = append(rep.Stale, vr)
		case len(ids) > 0:
			rep.Current = append(rep.Current, vr)
		}
	}
	return rep, nil
}

// Confirm records that an entry still holds for the code at HEAD: relevant
// feedback (its score kept, or 0.5), which anchors it here again, so that
// the files it names count as current.
func (s *Memory) Confirm(ctx context.Context, idPrefix string) (memory.Op, error) {
	d, err := s.recall().Show(ctx, idPrefix)
	if err != nil {
		return memory.Op{}, err
	}
	if d.Type == memory.TypeGitCommit || d.Type == memory.TypeNote {
		return memory.Op{}, Invalidf("%s is %s, derived from git; only memory entries are confirmed", ShortID(d.ID), d.Type)
	}
	score := d.Relevance
	if score <= 0 {
		score = 0.5
	}
	head, err := s.repo.Head()
	if err != nil || head.IsZero() {
		return memory.Op{}, Invalidf("there is no commit to confirm %s against", ShortID(d.ID))
	}
	return s.Feedback(ctx, d.ID, true, score, "confirmed against the code at "+head.String()[:12], "")
}
