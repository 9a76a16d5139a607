package cochange

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func at(i int) time.Time { return time.Unix(1700000000+int64(i)*3600, 0) }

func names(s []Suggestion) []string {
	out := make([]string, len(s))
	for i, x := range s {
		out[i] = x.File
	}
	return out
}

func TestRecommendersRankPartners(t *testing.T) {
	m := New(Options{})
	for i := 0; i < 5; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"a.go", "a_test.go"}})
	}
	m.Learn(Commit{Time: at(6), Files: []string{"a.go", "b.go", "c.go", "d.go"}})
	m.Learn(Commit{Time: at(7), Files: []string{"b.go", "c.go"}})
	huge := make([]string, 40)
	for i := range huge {
		huge[i] = fmt.Sprintf("gen/%d.go", i)
	}
	huge[0] = "a.go"
	if m.Learn(Commit{Time: at(8), Files: huge}) {
		t.Fatal("a commit over MaxFiles was learned")
	}
	for _, method := range Methods {
		got := m.Suggest([]string{"a.go"}, method, 3)
		if len(got) == 0 || got[0].File != "a_test.go" {
			t.Errorf("%s: %v", method, names(got))
		}
		for _, s := range got {
			if s.File == "a.go" || s.File == "gen/1.go" {
				t.Errorf("%s suggested %s", method, s.File)
			}
		}
	}
	p := m.Suggest([]string{"a.go"}, Count, 0)
	if p[0].Count != 5 || p[0].Confidence != 5.0/6 {
		t.Fatalf("partners: %+v", p[0])
	}
	// ROSE with a multi-file query prefers rules whose antecedent holds.
	got := m.Suggest([]string{"b.go", "c.go"}, Rose, 5)
	if len(got) < 2 || got[0].File != "a.go" && got[0].File != "d.go" {
		t.Fatalf("rose exact: %v", names(got))
	}
	if m.Suggest([]string{"unknown.go"}, Count, 5) != nil {
		t.Fatal("suggestions for a file with no history from count")
	}
}

func TestRenameKeepsHistoryAndColdStartUsesDirectory(t *testing.T) {
	m := New(Options{})
	for i := 0; i < 3; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"old/x.go", "old/x_test.go", "docs/x.md"}})
	}
	m.Rename("old/x.go", "new/x.go")
	if m.FileCommits("old/x.go") != 0 || m.FileCommits("new/x.go") != 3 {
		t.Fatalf("rename: %d %d", m.FileCommits("old/x.go"), m.FileCommits("new/x.go"))
	}
	got := m.Suggest([]string{"new/x.go"}, Weighted, 5)
	if len(got) != 2 || got[0].Count != 3 || got[1].Count != 3 {
		t.Fatalf("after rename: %+v", got)
	}
	back := m.Suggest([]string{"old/x_test.go"}, Count, 5)
	if fmt.Sprint(names(back)) != "[docs/x.md new/x.go]" || back[1].Count != 3 {
		t.Fatalf("partner side of the rename: %+v", back)
	}
	// A brand-new file borrows its directory's recently changed files.
	if got := m.Suggest([]string{"docs/y.md"}, Weighted, 5); len(got) != 1 || got[0].File != "docs/x.md" {
		t.Fatalf("cold start: %v", names(got))
	}
}

func TestWeightedPrefersRecentSmallCommits(t *testing.T) {
	m := New(Options{HalfLife: 24 * time.Hour})
	// Long ago, q changed with old.go many times; lately with fresh.go.
	for i := 0; i < 6; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"q.go", "old.go"}})
	}
	for i := 0; i < 3; i++ {
		m.Learn(Commit{Time: at(24*30 + i), Files: []string{"q.go", "fresh.go"}})
	}
	if got := m.Suggest([]string{"q.go"}, Weighted, 2); got[0].File != "fresh.go" {
		t.Fatalf("recency: %v", names(got))
	}
	if got := m.Suggest([]string{"q.go"}, Count, 2); got[0].File != "old.go" {
		t.Fatalf("count ignores recency: %v", names(got))
	}
}

func TestWeightedFallbackRanksBelowEvidence(t *testing.T) {
	m := New(Options{})
	m.Learn(Commit{Time: at(0), Files: []string{"docs/a.md", "docs/other.md"}})
	for i := 1; i < 3; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"a.go", "b.go"}})
	}
	m.Learn(Commit{Time: at(3), Files: []string{"lib/c.go", "lib/d.go"}})
	got := m.Suggest([]string{"a.go"}, Weighted, 5)
	if fmt.Sprint(names(got)) != "[b.go docs/a.md]" || got[0].Count != 2 || got[1].Count != 0 {
		t.Fatalf("evidence, then the stem twin without evidence: %+v", got)
	}
	if got := m.Suggest([]string{"a.go"}, Weighted, 1); fmt.Sprint(names(got)) != "[b.go]" {
		t.Fatalf("enough evidence needs no fallback: %v", names(got))
	}
	if got := m.Suggest([]string{"lib/new.go"}, Weighted, 5); fmt.Sprint(names(got)) != "[lib/c.go lib/d.go]" {
		t.Fatalf("a new file borrows its directory: %v", names(got))
	}
}

func TestWeightedPrefersPairsChangedTogetherLately(t *testing.T) {
	m := New(Options{})
	// Same commit sizes and counts; b.go changed with q.go most recently.
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "b.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "a.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "b.go"}})
	m.Learn(Commit{Time: at(0), Files: []string{"q.go", "a.go"}})
	if got := m.Suggest([]string{"q.go"}, Weighted, 2); fmt.Sprint(names(got)) != "[a.go b.go]" || got[0].Score <= got[1].Score {
		t.Fatalf("recent pair first: %+v", got)
	}
}

func TestDeletedFilesAreNeverSuggested(t *testing.T) {
	m := New(Options{})
	for i := 0; i < 3; i++ {
		m.Learn(Commit{Time: at(i), Files: []string{"a.go", "old.go", "b.go"}})
	}
	m.Learn(Commit{Time: at(4), Files: []string{"old.go"}, Gone: []string{"old.go"}})
	for _, method := range Methods {
		for _, s := range m.Suggest([]string{"a.go"}, method, 10) {
			if s.File == "old.go" {
				t.Fatalf("%s suggested a deleted file: %v", method, names(m.Suggest([]string{"a.go"}, method, 10)))
			}
		}
	}
	// A file that comes back is suggested again.
	m.Learn(Commit{Time: at(5), Files: []string{"a.go", "old.go"}})
	if got := names(m.Suggest([]string{"a.go"}, Weighted, 10)); len(got) < 2 || got[0] != "old.go" {
		t.Fatalf("restored file: %v", got)
	}
	// A renamed file is suggested under its new name only.
	m.Rename("b.go", "c.go")
	got := names(m.Suggest([]string{"a.go"}, Count, 10))
	if !slices.Contains(got, "c.go") || slices.Contains(got, "b.go") {
		t.Fatalf("after rename: %v", got)
	}
}

func TestSnapshotLoadsTheSameModel(t *testing.T) {
	m := New(Options{SameDir: -1, HalfLife: 30 * 24 * time.Hour})
	files := []string{"x/a.go", "x/a_test.go", "y/b.go", "y/c.go", "z.md"}
	for i := 0; i < 60; i++ {
		c := Commit{Time: at(i), Files: []string{files[i%5], files[(i*3+1)%5], files[(i*7+2)%5]}}
		if i == 40 {
			c.Gone = []string{c.Files[0]}
		}
		m.Learn(c)
		if i == 30 {
			m.Rename("z.md", "docs/z.md")
		}
	}
	l, err := Load(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot of a loaded model, whose partners are still encoded, is
	// the same snapshot.
	if again, err := Load(l.Snapshot()); err != nil {
		t.Fatal(err)
	} else if a, b := m.Snapshot(), again.Snapshot(); len(a) != len(b) {
		t.Fatalf("snapshot of a loaded model: %d bytes, want %d", len(b), len(a))
	} else {
		l = again
	}
	for _, method := range Methods {
		for _, q := range [][]string{{"x/a.go"}, {"y/b.go", "docs/z.md"}, {"z.md"}, {"x/new.go"}} {
			if a, b := m.Suggest(q, method, 10), l.Suggest(q, method, 10); !reflect.DeepEqual(a, b) {
				t.Fatalf("%s %v:\n%v\n%v", method, q, a, b)
			}
		}
	}
	// Learning goes on from a loaded model as from the original.
	next := Commit{Time: at(61), Files: []string{"x/a.go", "y/c.go"}}
	m.Learn(next)
	l.Learn(next)
	if a, b := m.Suggest([]string{"y/c.go"}, Weighted, 10), l.Suggest([]string{"y/c.go"}, Weighted, 10); !reflect.DeepEqual(a, b) {
		t.Fatalf("after learning:\n%v\n%v", a, b)
	}
	// Damaged snapshots are refused, never a panic.
	snap := m.Snapshot()
	for _, cut := range []int{0, 5, len(snapshotMagic) + 3, len(snap) / 2, len(snap) - 1} {
		if _, err := Load(snap[:cut]); err == nil {
			t.Fatalf("a snapshot cut at %d loaded", cut)
		}
	}
	flipped := slices.Clone(snap)
	flipped[len(flipped)/2] ^= 1
	if _, err := Load(flipped); err == nil {
		t.Fatal("a snapshot with a flipped bit loaded")
	}
}

// withChecksum replaces b's checksum by the right one, so that fuzzing
// reaches the decoder behind it.
func withChecksum(b []byte) []byte {
	if len(b) < 4 {
		return b
	}
	body := b[: len(b)-4 : len(b)-4]
	return binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, crcTable()))
}

func FuzzLoad(f *testing.F) {
	m := New(Options{})
	m.Learn(Commit{Time: at(1), Files: []string{"a", "b"}})
	f.Add(m.Snapshot())
	f.Fuzz(func(t *testing.T, b []byte) {
		if l, err := Load(withChecksum(b)); err == nil {
			l.Suggest([]string{"a"}, Weighted, 5)
			l.Suggest([]string{"a", "b"}, Rose, 5)
			l.Learn(Commit{Time: at(2), Files: []string{"a", "c"}, Renames: []Rename{{From: "b", To: "d"}}})
			Load(l.Snapshot())
		}
	})
}

// In a history where partners live in other directories than the files'
// same-directory neighbours, tuning turns the same-directory factor off.
func TestTuneChoosesWhatPredictsThisHistory(t *testing.T) {
	var h []Commit
	i := 0
	add := func(files ...string) {
		h = append(h, Commit{Time: at(i), Files: files})
		i++
	}
	for round := 0; round < 40; round++ {
		for g := 0; g < 5; g++ {
			a, b, c := fmt.Sprintf("x%d/a.go", g), fmt.Sprintf("y%d/b.go", g), fmt.Sprintf("x%d/c.go", g)
			switch round % 5 {
			case 0, 1, 2:
				add(a, b) // the real partner, in another directory
			default:
				add(a, c) // a same-directory neighbour, less often
			}
		}
	}
	tu := Tune(h, 60)
	if tu.Validation != 60 || tu.Commits != len(h) || len(tu.Scores) != len(Candidates) {
		t.Fatalf("tuning: %+v", tu)
	}
	if New(tu.Chosen).opt.SameDir >= 0 {
		t.Fatalf("kept the same-directory factor: %+v", tu)
	}
	if tu.Scores[0].MRR >= tu.Scores[1].MRR {
		t.Fatalf("defaults scored no worse: %+v", tu.Scores)
	}
}

// Each validation commit is scored on the commits before it only: commits
// of files never seen before score nothing, whatever comes after them.
func TestTuneNeverSeesTheFuture(t *testing.T) {
	var h []Commit
	for i := 0; i < 50; i++ {
		h = append(h, Commit{Time: at(i), Files: []string{"lib/a.go", "lib/b.go"}})
	}
	for i := 0; i < 20; i++ {
		h = append(h, Commit{Time: at(100 + i), Files: []string{fmt.Sprintf("v%d/p.go", i), fmt.Sprintf("w%d/q.txt", i)}})
	}
	tu := Tune(h, 20)
	for _, s := range tu.Scores {
		if s.MRR != 0 || s.Hit3 != 0 {
			t.Fatalf("a validation commit was predicted from itself or later ones: %+v", tu.Scores)
		}
	}
	if tu.Chosen != Candidates[0] {
		t.Fatalf("without evidence the defaults stay: %+v", tu.Chosen)
	}
}

// Options read in JSON as the values in effect, and read back to options
// that work the same.
func TestOptionsJSON(t *testing.T) {
	for _, o := range Candidates {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var back Options
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if New(back).opt != New(o).opt || back.String() != o.String() {
			t.Fatalf("%s: %s read back as %+v", o, b, back)
		}
	}
	b, _ := json.Marshal(Options{})
	if want := `{"max_files":20,"half_life_days":365,"size_exponent":0.5,"same_dir":1,`; !strings.HasPrefix(string(b), want) {
		t.Fatalf("defaults in JSON: %s", b)
	}
}
