package memory

import (
	"sort"
	"time"
)

// OpKind names what an operation does to its entry.
type OpKind string

// Operation kinds.
const (
	OpEdit       OpKind = "edit"       // new content, type and/or tag changes
	OpPin        OpKind = "pin"        // immune to decay
	OpUnpin      OpKind = "unpin"      // subject to decay again
	OpArchive    OpKind = "archive"    // leaves search and list; kept in history
	OpUnarchive  OpKind = "unarchive"  // back in search and list
	OpTier       OpKind = "tier"       // explicit tier
	OpRelevant   OpKind = "relevant"   // relevance feedback: Score in (0,1], Reason, Objective
	OpIrrelevant OpKind = "irrelevant" // relevance feedback: collapse it in agents' context
)

// Op is one immutable change to an entry. Ops on the same entry are ordered
// by (Clock, At, ID), so every clone that holds the same ops folds them to the
// same state, whatever order they arrived in.
type Op struct {
	V          int       `json:"v"`
	ID         string    `json:"id"`
	Entry      string    `json:"entry"`
	Kind       OpKind    `json:"kind"`
	Clock      uint64    `json:"clock"`
	At         time.Time `json:"at"`
	Author     string    `json:"author"`
	Content    *string   `json:"content,omitempty"`
	Type       Type      `json:"type,omitempty"`
	AddTags    []string  `json:"add_tags,omitempty"`
	RemoveTags []string  `json:"remove_tags,omitempty"`
	Tier       Tier      `json:"tier,omitempty"`
	Score      float64   `json:"score,omitempty"`
	Reason     string    `json:"reason,omitempty"`
	Objective  string    `json:"objective,omitempty"`
	// Anchor and Files, on an edit or relevant operation, are the commit
	// HEAD was on and the files the entry names with their blobs there:
	// the entry was confirmed against that code (code.go).
	Anchor string            `json:"anchor,omitempty"`
	Files  map[string]string `json:"files,omitempty"`
}

// Validate checks every field of o.
func (o *Op) Validate() error {
	if o.V != FormatVersion {
		return Invalidf("invalid operation version %d", o.V)
	}
	if !ValidID(o.ID) || !ValidID(o.Entry) {
		return Invalidf("operation %q on %q: ids must be 32 lowercase hex digits", o.ID, o.Entry)
	}
	if o.At.IsZero() {
		return Invalidf("operation %s has no time", o.ID)
	}
	if err := ValidateCode(o.Anchor, o.Files); err != nil {
		return err
	}
	switch o.Kind {
	case OpPin, OpUnpin, OpArchive, OpUnarchive:
	case OpTier:
		if _, err := ParseTier(string(o.Tier)); err != nil {
			return err
		}
	case OpRelevant, OpIrrelevant:
		if o.Kind == OpRelevant && (o.Score <= 0 || o.Score > 1) {
			return Invalidf("relevance score %v must be above 0 and at most 1", o.Score)
		}
		for _, f := range []string{o.Reason, o.Objective} {
			if len(f) > 1024 {
				return Invalidf("relevance reason or objective over 1024 bytes")
			}
			if f != "" {
				if err := ValidateContent(f); err != nil {
					return err
				}
			}
		}
	case OpEdit:
		if o.Content == nil && o.Type == "" && len(o.AddTags) == 0 && len(o.RemoveTags) == 0 {
			return Invalidf("edit %s changes nothing", o.ID)
		}
		if o.Content != nil {
			if err := ValidateContent(*o.Content); err != nil {
				return err
			}
		}
		if o.Type != "" {
			if _, err := ParseType(string(o.Type)); err != nil {
				return err
			}
		}
		if _, err := NormalizeTags(append(append([]string(nil), o.AddTags...), o.RemoveTags...)); err != nil {
			return err
		}
	default:
		return Invalidf("unknown operation kind %q", o.Kind)
	}
	return nil
}

// SortOps orders ops deterministically: Lamport clock, then time, then id.
func SortOps(ops []Op) {
	sort.Slice(ops, func(i, j int) bool {
		a, b := ops[i], ops[j]
		if a.Clock != b.Clock {
			return a.Clock < b.Clock
		}
		if !a.At.Equal(b.At) {
			return a.At.Before(b.At)
		}
		return a.ID < b.ID
	})
}

// NextClock is the Lamport clock for a new op on an entry that has ops.
func NextClock(ops []Op) uint64 {
	var m uint64
	for _, o := range ops {
		if o.Clock > m {
			m = o.Clock
		}
	}
	return m + 1
}

// State is an entry with its operations applied.
type State struct {
	Entry
	TierExplicit bool      `json:"tier_explicit"`
	Archived     bool      `json:"archived"`
	Updated      time.Time `json:"updated"`
	Edits        int       `json:"edits"`
	// Relevance is the last relevance feedback score (0: none); Irrelevant
	// is set by irrelevant feedback until relevant feedback clears it.
	Relevance  float64 `json:"relevance,omitempty"`
	Irrelevant bool    `json:"irrelevant,omitempty"`
	// Verified is the commit of the last edit or relevant feedback that
	// carried one: the entry was confirmed against that code, and Files
	// are its files there (Checked is the commit to compare them at).
	Verified string `json:"verified,omitempty"`
}

// Checked is the commit the entry's files were last confirmed at: its
// last confirmation's, else its anchor ("" for neither).
func (s State) Checked() string {
	if s.Verified != "" {
		return s.Verified
	}
	return s.Anchor
}

// Fold applies ops (in any order; they are sorted here) to e. Ops for other
// entries are ignored.
func Fold(e Entry, ops []Op) State {
	s := State{Entry: e, Updated: e.Created}
	s.Tags = append([]string(nil), e.Tags...)
	s.TierExplicit = e.Tier != ""
	if s.Tier == "" {
		s.Tier = DefaultTier(e.Type)
	}
	sorted := append([]Op(nil), ops...)
	SortOps(sorted)
	for _, o := range sorted {
		if o.Entry != e.ID {
			continue
		}
		switch o.Kind {
		case OpPin:
			s.Pinned = true
		case OpUnpin:
			s.Pinned = false
		case OpArchive:
			s.Archived = true
		case OpUnarchive:
			s.Archived = false
		case OpTier:
			s.Tier, s.TierExplicit = o.Tier, true
		case OpRelevant:
			s.Relevance, s.Irrelevant = o.Score, false
		case OpIrrelevant:
			s.Relevance, s.Irrelevant = 0, true
		case OpEdit:
			s.Edits++
			if o.Content != nil {
				s.Content = *o.Content
			}
			if o.Type != "" {
				s.Type = o.Type
				if !s.TierExplicit {
					s.Tier = DefaultTier(o.Type)
				}
			}
			s.Tags = applyTags(s.Tags, o.AddTags, o.RemoveTags)
		}
		if (o.Kind == OpEdit || o.Kind == OpRelevant) && o.Anchor != "" {
			s.Verified, s.Files = o.Anchor, o.Files
		}
		if o.At.After(s.Updated) {
			s.Updated = o.At
		}
	}
	return s
}

func applyTags(tags, add, remove []string) []string {
	drop := map[string]bool{}
	for _, t := range remove {
		drop[t] = true
	}
	out := tags[:0:0]
	have := map[string]bool{}
	for _, t := range tags {
		if !drop[t] && !have[t] {
			have[t] = true
			out = append(out, t)
		}
	}
	for _, t := range add {
		if !have[t] {
			have[t] = true
			out = append(out, t)
		}
	}
	return out
}
