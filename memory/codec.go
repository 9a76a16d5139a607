package memory

import (
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"strings"
	"time"
)

// Paths inside a memory ref's tree (see docs/FORMAT.md):
//
//	entries/<id[0:2]>/<id>.json   one Entry
//	ops/<id[0:2]>/<id>.json       one Op (sharded by the op's own id)
//	purged/<id[0:2]>/<id>.json    a Tombstone: the entry was purged
const (
	EntriesDir = "entries"
	OpsDir     = "ops"
	PurgedDir  = "purged"
)

// PurgedPath is where the tombstone of purged entry id lives.
func PurgedPath(id string) string { return path.Join(PurgedDir, id[:2], id+".json") }

// Tombstone records a purge: the entry and operation files that were
// removed from history, which every clone removes from its own history
// when it sees the tombstone (git synaptic sync).
type Tombstone struct {
	V     int       `json:"v"`
	ID    string    `json:"id"`
	Paths []string  `json:"paths"`
	By    string    `json:"by"`
	At    time.Time `json:"at"`
}

// DecodeTombstone parses a tombstone and checks that it only names entry
// and operation files.
func DecodeTombstone(data []byte, id string) (Tombstone, error) {
	var t Tombstone
	if err := json.Unmarshal(data, &t); err != nil {
		return t, Invalidf("invalid tombstone: %v", err)
	}
	if t.V > FormatVersion {
		return t, fmt.Errorf("%w: tombstone v%d", ErrUnsupportedVersion, t.V)
	}
	if t.ID != id {
		return t, Invalidf("tombstone for %q stored as %q", t.ID, id)
	}
	for _, p := range t.Paths {
		if k, _ := PathKind(p); k != "entry" && k != "op" {
			return t, Invalidf("tombstone names %q, which is not an entry or operation file", p)
		}
	}
	return t, nil
}

// EntryPath is where entry id lives in a memory tree.
func EntryPath(id string) string { return path.Join(EntriesDir, id[:2], id+".json") }

// OpPath is where op id lives in a memory tree.
func OpPath(id string) string { return path.Join(OpsDir, id[:2], id+".json") }

// PathKind classifies a tree path: "entry", "op" or "purged" with the id the name
// promises, or "" for a path that is not part of the format.
func PathKind(p string) (kind, id string) {
	parts := strings.Split(p, "/")
	if len(parts) != 3 || !strings.HasSuffix(parts[2], ".json") {
		return "", ""
	}
	id = strings.TrimSuffix(parts[2], ".json")
	if !ValidID(id) || parts[1] != id[:2] {
		return "", ""
	}
	switch parts[0] {
	case EntriesDir:
		return "entry", id
	case OpsDir:
		return "op", id
	case PurgedDir:
		return "purged", id
	}
	return "", ""
}

// EncodeEntry validates and encodes e.
func EncodeEntry(e Entry) ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return marshal(e)
}

// EncodeOp validates and encodes o.
func EncodeOp(o Op) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return marshal(o)
}

func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// checkVersion reads only the "v" field, so a newer document is refused
// before any other field is interpreted.
func checkVersion(data []byte, what string) error {
	if len(data) > MaxDocumentBytes {
		return Invalidf("%s document is %d bytes (limit %d)", what, len(data), MaxDocumentBytes)
	}
	var hdr struct {
		V *int `json:"v"`
	}
	if err := json.Unmarshal(data, &hdr); err != nil {
		return Invalidf("%s is not a JSON object: %v", what, err)
	}
	switch {
	case hdr.V == nil:
		return Invalidf("%s has no format version field \"v\"", what)
	case *hdr.V > FormatVersion:
		return fmt.Errorf("%w: %s uses format v%d, this git-synaptic reads up to v%d; upgrade git-synaptic to read it", ErrUnsupportedVersion, what, *hdr.V, FormatVersion)
	case *hdr.V < 1:
		return Invalidf("%s has format version %d, below the first (1)", what, *hdr.V)
	}
	return nil
}

// DecodeEntry parses and validates an entry document. wantID, when not
// empty, must match the id inside (it comes from the file name).
func DecodeEntry(data []byte, wantID string) (Entry, error) {
	var e Entry
	if err := checkVersion(data, "entry"); err != nil {
		return e, err
	}
	if err := json.Unmarshal(data, &e); err != nil {
		return e, Invalidf("invalid entry: %v", err)
	}
	if wantID != "" && e.ID != wantID {
		return e, Invalidf("entry file for %s holds id %q", wantID, e.ID)
	}
	return e, e.Validate()
}

// DecodeOp parses and validates an operation document.
func DecodeOp(data []byte, wantID string) (Op, error) {
	var o Op
	if err := checkVersion(data, "operation"); err != nil {
		return o, err
	}
	if err := json.Unmarshal(data, &o); err != nil {
		return o, Invalidf("invalid operation: %v", err)
	}
	if wantID != "" && o.ID != wantID {
		return o, Invalidf("operation file for %s holds id %q", wantID, o.ID)
	}
	return o, o.Validate()
}

// NotesSource is the source name of entries indexed from commit notes.
const NotesSource = "refs/notes/synaptic"

// NoteID is the id under which the note on commit sha is indexed: derived
// from the commit id, so it is stable across clones, yet distinct from the
// commit's own id (which names the indexed commit itself).
func NoteID(sha string) string {
	sum := sha1.Sum([]byte("synaptic-note\x00" + sha))
	return hex.EncodeToString(sum[:])
}
