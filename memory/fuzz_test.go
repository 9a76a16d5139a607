package memory

import (
	"errors"
	"testing"
)

// FuzzDecode checks that no document, however mangled, panics the decoder
// or comes back accepted yet invalid; refusals are ErrInvalid or
// ErrUnsupportedVersion.
func FuzzDecode(f *testing.F) {
	e := Entry{V: 1, ID: "0123456789abcdef0123456789abcdef", Type: TypeDecision, Content: "x", Author: "a <b>"}
	e.Created = e.Created.AddDate(2026, 0, 0)
	doc, _ := EncodeEntry(e)
	for _, seed := range []string{string(doc), `{"v":2}`, `{"v":1,"id":"zz"}`, `[]`, `null`, "{\"v\":1,\"content\":\"\xff\"}", `{"v":1e400}`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, err := DecodeEntry(data, ""); err == nil {
			if verr := got.Validate(); verr != nil {
				t.Fatalf("accepted an invalid entry: %v", verr)
			}
		} else if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnsupportedVersion) {
			t.Fatalf("unexpected error kind: %v", err)
		}
		if o, err := DecodeOp(data, ""); err == nil {
			if verr := o.Validate(); verr != nil {
				t.Fatalf("accepted an invalid op: %v", verr)
			}
			Fold(e, []Op{o})
		}
	})
}
