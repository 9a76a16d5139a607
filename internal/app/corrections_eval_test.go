//go:build model

package app

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"testing"

	"github.com/git-synaptic/git-synaptic/memory"
)

// correctionCase is a line of testdata/corrections.jsonl: a sentence an
// agent might save (as type), and whether it is a correction the user
// gave the agent (a standing instruction on how to work) or a statement
// that only looks like one (a decision, a bug report, a fact with
// "stop", "never", "always", "next time").
type correctionCase struct {
	Text       string      `json:"text"`
	Type       memory.Type `json:"type"`
	Correction bool        `json:"correction"`
}

// TestCorrectionDetectors measures the pending-rule detection on the
// labelled set as the product runs it (each sentence saved untagged, then
// the pending list with the model), and each detector alone: the words
// (IsCorrection) and the meaning (directivesByMeaning). The product's
// precision and recall must both reach 0.9 (make eval-corrections prints
// the figures).
func TestCorrectionDetectors(t *testing.T) {
	f, err := os.Open("testdata/corrections.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []correctionCase
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c correctionCase
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("%s: %v", sc.Text(), err)
		}
		cases = append(cases, c)
	}
	ctx := context.Background()
	s := openTest(t, Options{})
	want := map[string]correctionCase{}
	byWords := map[string]bool{}
	for _, c := range cases {
		e, err := s.Memory().Save(ctx, SaveRequest{Content: c.Text, Type: c.Type})
		if err != nil {
			t.Fatal(err)
		}
		want[e.ID] = c
		byWords[e.ID] = IsCorrection(Entry{State: memory.State{Entry: e}})
	}
	byMeaning := map[string]bool{}
	for _, e := range s.core.directivesByMeaning(ctx, modelVectors) {
		byMeaning[e.ID] = true
	}
	pending, err := s.Agent().PendingRules(ctx)
	if err != nil {
		t.Fatal(err)
	}
	product := map[string]bool{}
	for _, p := range pending {
		product[p.ID] = true
	}
	for _, d := range []struct {
		name  string
		found map[string]bool
	}{{"words", byWords}, {"meaning", byMeaning}, {"product (pending rules)", product}} {
		var tp, fp, fn int
		for id, c := range want {
			switch {
			case d.found[id] && c.Correction:
				tp++
			case d.found[id]:
				fp++
				t.Logf("%s: false positive (%s): %s", d.name, c.Type, c.Text)
			case c.Correction:
				fn++
				t.Logf("%s: missed (%s): %s", d.name, c.Type, c.Text)
			}
		}
		p, r := ratio(tp, tp+fp), ratio(tp, tp+fn)
		t.Logf("%-24s precision %.3f  recall %.3f  (%d corrections, %d look-alikes; %d found, %d wrongly)", d.name, p, r, tp+fn, len(want)-tp-fn, tp, fp)
		if d.name == "product (pending rules)" && (p < 0.9 || r < 0.9) {
			t.Errorf("%s: precision %.3f, recall %.3f: both must reach 0.9", d.name, p, r)
		}
	}
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
