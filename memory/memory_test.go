package memory

import (
	"errors"
	"math/rand"
	"strings"
	"testing"
	"time"
)

func entry() Entry {
	return Entry{V: 1, ID: NewID(), Type: TypeDecision, Content: "use postgres", Tags: []string{"db"}, Author: "A <a@x>", Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func TestCodecRoundTripAndVersionGate(t *testing.T) {
	e := entry()
	doc, err := EncodeEntry(e)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeEntry(doc, e.ID)
	if err != nil || back.Content != e.Content || !back.Created.Equal(e.Created) {
		t.Fatalf("round trip: %v %+v", err, back)
	}
	if _, err := DecodeEntry(doc, NewID()); !errors.Is(err, ErrInvalid) {
		t.Fatalf("id mismatch accepted: %v", err)
	}
	future := strings.Replace(string(doc), `"v":1`, `"v":7`, 1)
	if _, err := DecodeEntry([]byte(future), ""); !errors.Is(err, ErrUnsupportedVersion) || !strings.Contains(err.Error(), "v7") {
		t.Fatalf("newer version not refused: %v", err)
	}
	for _, bad := range []string{`{}`, `[]`, `{"v":0}`, `not json`, `{"v":1,"id":"x"}`} {
		if _, err := DecodeEntry([]byte(bad), ""); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s accepted: %v", bad, err)
		}
	}
	// Unknown fields from a compatible writer are ignored, not refused.
	extra := strings.Replace(string(doc), `"v":1,`, `"v":1,"future_field":true,`, 1)
	if _, err := DecodeEntry([]byte(extra), e.ID); err != nil {
		t.Fatalf("unknown field refused: %v", err)
	}
}

func TestValidateContent(t *testing.T) {
	for _, ok := range []string{"hello", "tabs\tand\nnewlines\r\n", "ünïcödé 日本語 🙂"} {
		if err := ValidateContent(ok); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{"", " \n ", "\xff", "a\x00b", "esc\x1b", strings.Repeat("x", MaxContentBytes+1)} {
		if err := ValidateContent(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("%q accepted", bad[:min(len(bad), 10)])
		}
	}
	if _, err := NormalizeTags([]string{"DB", "db", "a/b", "x.y"}); err != nil {
		t.Fatal(err)
	}
	tags, _ := NormalizeTags([]string{"DB", "db", "Ops"})
	if strings.Join(tags, ",") != "db,ops" {
		t.Fatalf("normalize: %v", tags)
	}
	for _, bad := range []string{"", "-x", "has space", strings.Repeat("a", 65)} {
		if _, err := NormalizeTags([]string{bad}); err == nil {
			t.Errorf("tag %q accepted", bad)
		}
	}
}

func TestFoldIsDeterministicWhateverTheOrder(t *testing.T) {
	e := entry()
	at := e.Created
	s := func(v string) *string { return &v }
	ops := []Op{
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpEdit, Clock: 1, At: at.Add(time.Hour), Content: s("from clone a"), AddTags: []string{"a"}},
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpEdit, Clock: 1, At: at.Add(time.Hour), Content: s("from clone b"), AddTags: []string{"b"}, RemoveTags: []string{"db"}},
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpPin, Clock: 2, At: at.Add(2 * time.Hour)},
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpArchive, Clock: 2, At: at.Add(3 * time.Hour)},
		{V: 1, ID: NewID(), Entry: e.ID, Kind: OpTier, Clock: 3, At: at.Add(time.Minute), Tier: TierLongterm},
		{V: 1, ID: NewID(), Entry: NewID(), Kind: OpPin, Clock: 9, At: at}, // another entry's op
	}
	want := Fold(e, ops)
	rng := rand.New(rand.NewSource(1))
	for i := 0; i < 50; i++ {
		p := append([]Op(nil), ops...)
		rng.Shuffle(len(p), func(i, j int) { p[i], p[j] = p[j], p[i] })
		got := Fold(e, p)
		if got.Content != want.Content || strings.Join(got.Tags, ",") != strings.Join(want.Tags, ",") || got.Pinned != want.Pinned || got.Archived != want.Archived || got.Tier != want.Tier {
			t.Fatalf("fold depends on order:\n%+v\n%+v", got, want)
		}
	}
	if !want.Pinned || !want.Archived || want.Tier != TierLongterm || !want.TierExplicit || want.Edits != 2 {
		t.Fatalf("fold: %+v", want)
	}
	// Both clones' tag additions survive; b's removal of db applies.
	if strings.Join(want.Tags, ",") != "a,b" && strings.Join(want.Tags, ",") != "b,a" {
		t.Fatalf("tags: %v", want.Tags)
	}
	if NextClock(ops) != 10 {
		t.Fatalf("next clock %d", NextClock(ops))
	}
}

func TestDefaultTiersAndPaths(t *testing.T) {
	cases := map[Type]Tier{TypeHandoff: TierEphemeral, TypeProgress: TierEphemeral, TypeIssue: TierWorking, TypeDecision: TierWorking, TypeInsight: TierWorking, TypeReference: TierLongterm, TypeRule: TierLongterm}
	for typ, tier := range cases {
		if DefaultTier(typ) != tier {
			t.Errorf("%s: %s", typ, DefaultTier(typ))
		}
	}
	id := NewID()
	if k, got := PathKind(EntryPath(id)); k != "entry" || got != id {
		t.Fatal(k, got)
	}
	if k, got := PathKind(OpPath(id)); k != "op" || got != id {
		t.Fatal(k, got)
	}
	for _, bad := range []string{"README", "entries/zz/" + id + ".json", "entries/" + id[:2] + "/" + id, "x/" + id[:2] + "/" + id + ".json"} {
		if k, _ := PathKind(bad); k != "" {
			t.Errorf("%s classified as %s", bad, k)
		}
	}
}
