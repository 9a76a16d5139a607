package cochange

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Candidates are the option sets Tune chooses among, the defaults first:
// whether a partner in the query file's directory counts double (it helps
// where code lives in many directories, and hurts in one flat src/), and
// how fast old commits fade.
var Candidates = []Options{
	{},
	{SameDir: -1},
	{HalfLife: 90 * 24 * time.Hour},
	{SameDir: -1, HalfLife: 90 * 24 * time.Hour},
}

// tuneMargin is how much better than the defaults' MRR@10 a candidate must
// score to be chosen, so that noise in a small validation set does not
// move the ranking.
const tuneMargin = 0.005

// Score is how well Weighted, under Options, predicted the validation
// commits: rolling navigation (each file of a commit queries the commit's
// other files), means per commit of MRR@10 and hit@3.
type Score struct {
	Options Options `json:"options"`
	MRR     float64 `json:"mrr10"`
	Hit3    float64 `json:"hit3"`
}

// Tuning is what Tune measured and chose.
type Tuning struct {
	Chosen     Options `json:"chosen"`
	Commits    int     `json:"commits"`    // history commits it saw
	Validation int     `json:"validation"` // commits scored
	Scores     []Score `json:"scores"`     // Candidates' scores, in order
}

// Tune chooses among Candidates the options under which Weighted best
// predicts the last commits of history (up to holdout of those with 2-20
// files), learning each from the commits before it only, as the product
// learns. history is oldest first.
func Tune(history []Commit, holdout int) Tuning {
	start := len(history)
	n := 0
	for start > 0 && n < holdout {
		start--
		if k := len(dedupe(history[start].Files)); k >= 2 && k <= 20 {
			n++
		}
	}
	t := Tuning{Commits: len(history), Validation: n, Scores: make([]Score, len(Candidates))}
	// Candidates that learn alike (all but SameDir, which only scoring
	// reads) share one model.
	done := make([]bool, len(Candidates))
	for i, c := range Candidates {
		if done[i] {
			continue
		}
		var group []int
		for j := i; j < len(Candidates); j++ {
			if learnsAlike(c, Candidates[j]) {
				group = append(group, j)
				done[j] = true
			}
		}
		m := New(c)
		for _, h := range history[:start] {
			m.Learn(h)
		}
		sums := make([]Score, len(group))
		for _, h := range history[start:] {
			files := dedupe(h.Files)
			if k := len(files); k >= 2 && k <= 20 {
				for g, j := range group {
					m.opt.SameDir = New(Candidates[j]).opt.SameDir
					mrr, hit3 := navigate(m, files)
					sums[g].MRR += mrr
					sums[g].Hit3 += hit3
				}
			}
			m.Learn(h)
		}
		for g, j := range group {
			t.Scores[j] = Score{Options: Candidates[j], MRR: sums[g].MRR / float64(max(n, 1)), Hit3: sums[g].Hit3 / float64(max(n, 1))}
		}
	}
	best := 0
	for i, s := range t.Scores {
		if s.MRR > t.Scores[best].MRR && s.MRR >= t.Scores[0].MRR+tuneMargin {
			best = i
		}
	}
	t.Chosen = Candidates[best]
	return t
}

// learnsAlike reports whether a and b build the same model.
func learnsAlike(a, b Options) bool {
	a.SameDir, b.SameDir = 0, 0
	return a == b
}

// navigate scores one commit: each file queries, the others are right;
// it returns the means over files of the reciprocal rank of the first
// right answer in the top 10, and of a right answer in the top 3.
func navigate(m *Model, files []string) (mrr, hit3 float64) {
	for i := range files {
		got := m.Suggest(files[i:i+1], Weighted, 10)
		for r, s := range got {
			if s.File != files[i] && slices.Contains(files, s.File) {
				mrr += 1 / float64(r+1)
				if r < 3 {
					hit3++
				}
				break
			}
		}
	}
	return mrr / float64(len(files)), hit3 / float64(len(files))
}

// String describes options as a person would set them.
// optionsJSON is how Options read in JSON: the values in effect, defaults
// filled in, and a summary for people.
type optionsJSON struct {
	MaxFiles     int     `json:"max_files"`
	HalfLifeDays float64 `json:"half_life_days"`
	SizeExp      float64 `json:"size_exponent"`
	SameDir      float64 `json:"same_dir"` // a same-directory partner counts 1+same_dir times; <0: off
	Summary      string  `json:"summary,omitempty"`
}

// MarshalJSON writes the options in effect, defaults filled in.
func (o Options) MarshalJSON() ([]byte, error) {
	n := New(o).opt
	return json.Marshal(optionsJSON{MaxFiles: n.MaxFiles, HalfLifeDays: n.HalfLife.Hours() / 24, SizeExp: n.SizeExp, SameDir: n.SameDir, Summary: o.String()})
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (o *Options) UnmarshalJSON(b []byte) error {
	var j optionsJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*o = Options{MaxFiles: j.MaxFiles, HalfLife: time.Duration(j.HalfLifeDays * 24 * float64(time.Hour)), SizeExp: j.SizeExp, SameDir: j.SameDir}
	return nil
}

// String describes the options in effect.
func (o Options) String() string {
	n := New(o).opt
	dir := fmt.Sprintf("same directory ×%g", 1+n.SameDir)
	if n.SameDir < 0 {
		dir = "same directory not favoured"
	}
	return fmt.Sprintf("%s, half-life %dd, size exponent %g, commits up to %d files", dir, int(n.HalfLife.Hours()/24), n.SizeExp, n.MaxFiles)
}
