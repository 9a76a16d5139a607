package memory

import (
	"errors"
	"strings"
	"testing"
	"time"
)

const (
	commitA = "1111111111111111111111111111111111111111"
	commitB = "2222222222222222222222222222222222222222"
	blobX   = "3333333333333333333333333333333333333333"
	blobY   = "4444444444444444444444444444444444444444"
)

// An entry's files are those of its last confirmation (an edit or
// relevant feedback carrying an anchor); other operations leave them.
func TestFoldKeepsTheLastConfirmation(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	e := Entry{V: 1, ID: NewID(), Type: TypeDecision, Content: "a.go", Author: "A <a@x>", Created: at,
		Anchor: commitA, Files: map[string]string{"a.go": blobX}}
	st := Fold(e, nil)
	if st.Checked() != commitA || st.Verified != "" {
		t.Fatalf("unconfirmed: checked %q verified %q", st.Checked(), st.Verified)
	}
	ops := []Op{
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpRelevant, Score: 1, Clock: 1, At: at, Anchor: commitB, Files: map[string]string{"a.go": blobY}},
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpPin, Clock: 2, At: at},
	}
	st = Fold(e, ops)
	if st.Checked() != commitB || st.Anchor != commitA || st.Files["a.go"] != blobY {
		t.Errorf("confirmed: checked %q, anchor %q, files %v", st.Checked(), st.Anchor, st.Files)
	}
}

func TestValidateCode(t *testing.T) {
	for _, c := range []struct {
		anchor string
		files  map[string]string
		ok     bool
	}{
		{"", nil, true},
		{commitA, nil, true},
		{commitA + strings.Repeat("0", 24), map[string]string{"a/b.go": blobX}, true}, // SHA-256
		{"HEAD", nil, false},
		{strings.Repeat("A", 40), nil, false}, // upper case
		{"", map[string]string{"a.go": blobX}, false},
		{commitA, map[string]string{"../a.go": blobX}, false},
		{commitA, map[string]string{"/etc/passwd": blobX}, false},
		{commitA, map[string]string{"a\n.go": blobX}, false},
		{commitA, map[string]string{"a.go": "x"}, false},
	} {
		err := ValidateCode(c.anchor, c.files)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("ValidateCode(%q, %q) = %v, want ok %v", c.anchor, c.files, err, c.ok)
		}
	}
	many := map[string]string{}
	for i := 0; i <= MaxFiles; i++ {
		many[strings.Repeat("a", i+1)] = blobX
	}
	if ValidateCode(commitA, many) == nil {
		t.Error("too many files accepted")
	}
}
