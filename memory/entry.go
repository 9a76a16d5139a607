// Package memory is git-synaptic's domain model, the data people and
// agents author: memory entries, the operations recorded on them, their
// versioned JSON encoding, validation, and the deterministic fold of an
// entry and its operations into current state.
//
// The package is pure: no I/O, no git, no SQLite.
package memory

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// FormatVersion is the on-disk format version this build writes and reads.
const FormatVersion = 1

// MaxContentBytes is the largest entry content accepted (documented in docs/FORMAT.md).
const MaxContentBytes = 64 << 10

// MaxDocumentBytes is the largest encoded document read back from git; larger
// blobs are refused as garbage without being loaded.
const MaxDocumentBytes = 1 << 20

// MinYear and MaxYear bound creation dates: the cache keeps times as
// nanoseconds since 1970 in 64 bits, which covers 1678 to 2262.
const (
	MinYear = 1678
	MaxYear = 2261
)

// MaxTags is the largest number of tags on one entry.
const MaxTags = 32

// ErrInvalid marks content or metadata refused by validation.
var ErrInvalid = errors.New("invalid")

// Invalidf returns an error that wraps ErrInvalid with the message format
// and args give (%w wraps as in fmt.Errorf), without the sentinel's own
// word in front of it: "unknown type ...", not "invalid: unknown type ...".
func Invalidf(format string, args ...any) error {
	return invalidError{fmt.Errorf(format, args...)}
}

type invalidError struct{ error }

func (e invalidError) Unwrap() error        { return e.error }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// ErrUnsupportedVersion marks a document written by a newer git-synaptic.
var ErrUnsupportedVersion = errors.New("unsupported format version")

// Type is the kind of a memory entry.
type Type string

// Entry types. TypeGitCommit is reserved for indexed commits and TypeNote for
// commit notes; neither can be saved as an entry.
const (
	TypeDecision  Type = "decision"
	TypeProgress  Type = "progress"
	TypeIssue     Type = "issue"
	TypeHandoff   Type = "handoff"
	TypeInsight   Type = "insight"
	TypeReference Type = "reference"
	TypeRule      Type = "rule"
	TypeGitCommit Type = "git_commit"
	TypeNote      Type = "note"
)

// SavableTypes lists the types a user may save, in display order.
var SavableTypes = []Type{TypeDecision, TypeProgress, TypeIssue, TypeHandoff, TypeInsight, TypeReference, TypeRule}

// Tier is a memory tier.
type Tier string

// Memory tiers, shortest-lived first.
const (
	TierEphemeral Tier = "ephemeral"
	TierWorking   Tier = "working"
	TierLongterm  Tier = "longterm"
)

// ParseType checks that s names a type a user may save.
func ParseType(s string) (Type, error) {
	for _, t := range SavableTypes {
		if string(t) == s {
			return t, nil
		}
	}
	if s == string(TypeGitCommit) || s == string(TypeNote) {
		return "", Invalidf("type %q is reserved for indexing", s)
	}
	return "", Invalidf("unknown type %q (want one of %s)", s, joinTypes(SavableTypes))
}

// KnownType reports whether t is any type the cache may hold, reserved ones included.
func KnownType(t Type) bool {
	if t == TypeGitCommit || t == TypeNote {
		return true
	}
	_, err := ParseType(string(t))
	return err == nil
}

func joinTypes(ts []Type) string {
	s := make([]string, len(ts))
	for i, t := range ts {
		s[i] = string(t)
	}
	return strings.Join(s, ", ")
}

// ParseTier checks that s names a tier.
func ParseTier(s string) (Tier, error) {
	switch Tier(s) {
	case TierEphemeral, TierWorking, TierLongterm:
		return Tier(s), nil
	}
	return "", Invalidf("unknown tier %q (want ephemeral, working or longterm)", s)
}

// DefaultTier is the tier an entry of type t gets unless one is set explicitly.
func DefaultTier(t Type) Tier {
	switch t {
	case TypeHandoff, TypeProgress:
		return TierEphemeral
	case TypeReference, TypeRule:
		return TierLongterm
	default:
		return TierWorking
	}
}

// Entry is one immutable memory document. Changes are recorded as Ops.
type Entry struct {
	V          int       `json:"v"`
	ID         string    `json:"id"`
	Type       Type      `json:"type"`
	Content    string    `json:"content"`
	Tags       []string  `json:"tags,omitempty"`
	Project    string    `json:"project,omitempty"`
	Branch     string    `json:"branch,omitempty"`
	SessionID  string    `json:"session_id,omitempty"`
	AgentID    string    `json:"agent_id,omitempty"`
	Author     string    `json:"author"`
	Created    time.Time `json:"created"`
	RelatedIDs []string  `json:"related_ids,omitempty"`
	Tier       Tier      `json:"tier,omitempty"`
	Pinned     bool      `json:"pinned,omitempty"`
	// Anchor is the commit HEAD was on when the entry was written (none
	// outside a commit, as in an empty repository), and Files the files
	// its content names with their blob ids there (code.go). Both are
	// optional: older entries have neither.
	Anchor string            `json:"anchor,omitempty"`
	Files  map[string]string `json:"files,omitempty"`
}

// NewID returns a random 128-bit id as 32 lowercase hex digits.
func NewID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err)) // cannot happen on supported platforms
	}
	return hex.EncodeToString(b[:])
}

// ValidID reports whether id has the shape of an entry or operation id:
// 32 lowercase hex digits.
func ValidID(id string) bool { return len(id) == 32 && lowerHex(id) }

// lowerHex reports whether s is all lowercase hex digits.
func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// validTag: a letter or digit, then up to 63 letters, digits or ._:/+#-.
func validTag(t string) bool {
	n := 0
	for i, r := range t {
		n++
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !ok && i > 0 {
			ok = strings.ContainsRune("._:/+#-", r)
		}
		if !ok || n > 64 {
			return false
		}
	}
	return n > 0
}

// NormalizeTags lower-cases, validates and de-duplicates tags, keeping order.
func NormalizeTags(tags []string) ([]string, error) {
	seen := map[string]bool{}
	out := make([]string, 0, len(tags))
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if !validTag(t) {
			return nil, Invalidf("tag %q must start with a letter or digit and hold at most 64 letters, digits or ._:/+#-", t)
		}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	if len(out) > MaxTags {
		return nil, Invalidf("%d tags (at most %d)", len(out), MaxTags)
	}
	return out, nil
}

// ValidName reports whether s can name a session or an agent: valid
// UTF-8, at most 256 bytes, no control characters (a NUL breaks every
// later write, an escape sequence would drive the terminal of whoever
// lists the entry).
func ValidName(s string) bool {
	if len(s) > 256 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// ValidateContent checks entry text: valid UTF-8, not blank, within
// MaxContentBytes, and free of control characters other than tab and newline.
func ValidateContent(s string) error {
	if !utf8.ValidString(s) {
		return Invalidf("content is not valid UTF-8 (binary data cannot be saved as memory)")
	}
	if strings.TrimSpace(s) == "" {
		return Invalidf("content is empty")
	}
	if len(s) > MaxContentBytes {
		return Invalidf("content is %d bytes, the limit is %d bytes (64 KiB); save a summary and a reference instead", len(s), MaxContentBytes)
	}
	for i, r := range s {
		if r == '\n' || r == '\t' || r == '\r' {
			continue
		}
		if unicode.IsControl(r) {
			return Invalidf("content holds control character %U at byte %d", r, i)
		}
	}
	return nil
}

// Validate checks every field of e.
func (e *Entry) Validate() error {
	if e.V != FormatVersion {
		return Invalidf("invalid entry version %d", e.V)
	}
	if !ValidID(e.ID) {
		return Invalidf("entry id %q is not 32 lowercase hex digits", e.ID)
	}
	if _, err := ParseType(string(e.Type)); err != nil {
		return err
	}
	if err := ValidateContent(e.Content); err != nil {
		return err
	}
	if _, err := NormalizeTags(e.Tags); err != nil {
		return err
	}
	if e.Tier != "" {
		if _, err := ParseTier(string(e.Tier)); err != nil {
			return err
		}
	}
	if e.Created.IsZero() {
		return Invalidf("entry %s has no creation time", e.ID)
	}
	if y := e.Created.Year(); y < MinYear || y > MaxYear {
		return Invalidf("entry %s was created in the year %d; dates must lie between %d and %d", e.ID, y, MinYear, MaxYear)
	}
	for _, id := range e.RelatedIDs {
		if !ValidID(id) {
			return Invalidf("related id %q is not 32 lowercase hex digits", id)
		}
	}
	if err := ValidateCode(e.Anchor, e.Files); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"author", e.Author}, {"project", e.Project}, {"branch", e.Branch}, {"session_id", e.SessionID}, {"agent_id", e.AgentID}} {
		if len(f.v) > 256 || !utf8.ValidString(f.v) || strings.ContainsAny(f.v, "\x00\n") {
			return Invalidf("field %s is not a short single line of UTF-8", f.name)
		}
	}
	return nil
}
