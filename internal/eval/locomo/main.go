// Command locomo measures retrieval on the LoCoMo long-term conversational
// memory benchmark (`make eval-locomo`; data in ../shared/eval/locomo-dev).
// Protocol (../shared/README.md): per conversation, every dialogue turn is
// saved as a memory entry ("speaker: text", with its real date), then each
// question is run as a search; turn-level recall@k = |evidence ∩ top-k| /
// |evidence|, averaged over questions, reported per category and overall,
// with MRR.
//
// The figures that count are the product's paths, run as a user runs
// them: the default search (`git synaptic search`, 10 results, default
// options and weights, the clock of today, uses counted as the product
// counts them), MCP `context_search` through the real server, and the
// prompt hook (`git synaptic hook prompt`, one agent session per
// question). Each path works on its own copy of the conversation's
// repository, so that no path's uses shape another's ranking. With -bin
// the same paths drive the built binary end to end (import, embed, search,
// hook prompt) instead of the application in process. The retrievers with
// the product's weights switched off follow, as a reference only.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

type turn struct {
	Conv, ID, Session, DateTime, Speaker, Text string
}

type query struct {
	Conv     string   `json:"conv"`
	Question string   `json:"question"`
	Category int      `json:"category"`
	Evidence []string `json:"evidence"`
}

func main() {
	dir := flag.String("data", "../shared/eval/locomo-dev", "directory holding turns.jsonl and queries.jsonl")
	bin := flag.String("bin", "", "drive this git-synaptic binary end to end instead of the application in process")
	only := flag.String("paths", "", "comma-separated paths to run (default: all): "+strings.Join(pathNames(), ", "))
	flag.Parse()
	if err := run(*dir, *bin, *only); err != nil {
		fmt.Fprintln(os.Stderr, "eval-locomo:", err)
		os.Exit(1)
	}
}

func readJSONL[T any](path string, fn func(T)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		fn(v)
	}
	return sc.Err()
}

func load(dataDir string) (map[string][]turn, map[string][]query, []string, error) {
	turns := map[string][]turn{}
	if err := readJSONL(filepath.Join(dataDir, "turns.jsonl"), func(t struct {
		Conv     string          `json:"conv"`
		ID       string          `json:"id"`
		Session  json.RawMessage `json:"session"`
		DateTime string          `json:"date_time"`
		Speaker  string          `json:"speaker"`
		Text     string          `json:"text"`
	}) {
		turns[t.Conv] = append(turns[t.Conv], turn{t.Conv, t.ID, string(t.Session), t.DateTime, t.Speaker, t.Text})
	}); err != nil {
		return nil, nil, nil, err
	}
	queries := map[string][]query{}
	if err := readJSONL(filepath.Join(dataDir, "queries.jsonl"), func(q query) { queries[q.Conv] = append(queries[q.Conv], q) }); err != nil {
		return nil, nil, nil, err
	}
	convs := make([]string, 0, len(turns))
	for c := range turns {
		convs = append(convs, c)
	}
	sort.Strings(convs)
	return turns, queries, convs, nil
}

// evidence is a question's evidence as the dialogue ids entries are
// tagged with (lower case).
func (q query) evidence() map[string]bool {
	ev := map[string]bool{}
	for _, e := range q.Evidence {
		for _, id := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
			ev[strings.ToLower(id)] = true
		}
	}
	return ev
}

func run(dataDir, bin, only string) error {
	os.Setenv("GIT_AUTHOR_NAME", "LoCoMo")
	os.Setenv("GIT_AUTHOR_EMAIL", "locomo@example.com")
	os.Setenv("GIT_COMMITTER_NAME", "LoCoMo")
	os.Setenv("GIT_COMMITTER_EMAIL", "locomo@example.com")
	os.Setenv("GIT_SYNAPTIC_PROJECTS", "off") // no entry in the user's project list
	turns, queries, convs, err := load(dataDir)
	if err != nil {
		return err
	}
	paths, err := choose(only, bin != "")
	if err != nil {
		return err
	}
	results := make([]*pathStats, len(paths))
	for i, p := range paths {
		results[i] = &pathStats{path: p, byCat: map[int]*stats{}}
	}
	ctx := context.Background()
	start := time.Now()
	model := ""
	for ci, conv := range convs {
		cv, err := newConversation(ctx, conv, turns[conv], bin)
		if err != nil {
			return fmt.Errorf("%s: %w", conv, err)
		}
		model = cv.model
		for i, p := range paths {
			qs := queries[conv]
			if p.hook {
				// the next conversation's questions are off-topic here:
				// what the hook injects for them is noise
				qs = append(slices.Clone(qs), queries[convs[(ci+1)%len(convs)]]...)
			}
			out, err := cv.runPath(ctx, p, qs)
			if err != nil {
				cv.close()
				return fmt.Errorf("%s, %s: %w", conv, p.name, err)
			}
			results[i].score(queries[conv], out[:len(queries[conv])])
			for _, o := range out[len(queries[conv]):] {
				results[i].offTopic(o)
			}
		}
		cv.close()
	}
	how := "the application in process"
	if bin != "" {
		how = "the binary " + bin + " end to end"
	}
	fmt.Printf("LoCoMo dev (%d conversations, %d questions with evidence) in %s through %s\nmodel: %s; turns dated as spoken, searched today; time in questions read as of the day after each conversation\n",
		len(convs), results[0].all.n, time.Since(start).Round(time.Millisecond), how, model)
	for _, r := range results {
		fmt.Printf("\n%s\n", r.path.title)
		if err := r.print(); err != nil {
			return err
		}
	}
	return nil
}

type stats struct {
	n                     int
	r1, r5, r10, r50, mrr float64
	// the prompt hook: questions with any / all evidence injected, and the
	// characters injected
	any, all, chars float64
}

func (s *stats) add(o outcome, evidence map[string]bool) {
	s.n++
	hits := func(k int) float64 {
		c := 0
		for i, id := range o.ranked {
			if i >= k {
				break
			}
			if evidence[id] {
				c++
			}
		}
		return float64(c) / float64(len(evidence))
	}
	s.r1 += hits(1)
	s.r5 += hits(5)
	s.r10 += hits(10)
	s.r50 += hits(50)
	for i, id := range o.ranked {
		if evidence[id] {
			s.mrr += 1 / float64(i+1)
			break
		}
	}
	if r := hits(len(o.ranked)); r > 0 {
		s.any++
		if r == 1 {
			s.all++
		}
	}
	s.chars += float64(o.chars)
}

type pathStats struct {
	path      path
	byCat     map[int]*stats
	all, core stats
	// off-topic prompts asked of the prompt hook, those that got any item,
	// and the items and characters they got
	off, offAny, offItems, offChars int
}

func (r *pathStats) offTopic(o outcome) {
	r.off++
	r.offItems += o.items
	r.offChars += o.chars
	if o.items > 0 {
		r.offAny++
	}
}

func (r *pathStats) score(qs []query, out []outcome) {
	for i, q := range qs {
		ev := q.evidence()
		if len(ev) == 0 {
			continue
		}
		if r.byCat[q.Category] == nil {
			r.byCat[q.Category] = &stats{}
		}
		r.byCat[q.Category].add(out[i], ev)
		r.all.add(out[i], ev)
		if q.Category <= 4 {
			r.core.add(out[i], ev)
		}
	}
}

func (r *pathStats) print() error {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	if r.path.hook {
		fmt.Fprintln(w, "category\tquestions\tevidence recall\tany evidence\tall evidence\tchars injected\t")
	} else {
		fmt.Fprintln(w, "category\tquestions\tR@1\tR@5\tR@10\tR@50\tMRR\t")
	}
	names := map[int]string{1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
	row := func(name string, s *stats) {
		n := float64(max(s.n, 1))
		if r.path.hook {
			fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.0f\t\n", name, s.n, s.r50/n, s.any/n, s.all/n, s.chars/n)
			return
		}
		r50 := fmt.Sprintf("%.3f", s.r50/n)
		if r.path.limit < 50 {
			r50 = "-"
		}
		fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\t%s\t%.3f\t\n", name, s.n, s.r1/n, s.r5/n, s.r10/n, r50, s.mrr/n)
	}
	// The headline first: category 5 (adversarial) flatters recall.
	row("all 1-4", &r.core)
	for c := 1; c <= 5; c++ {
		if s := r.byCat[c]; s != nil {
			row(names[c], s)
		}
	}
	row("all 1-5", &r.all)
	if err := w.Flush(); err != nil {
		return err
	}
	if r.off > 0 {
		n := float64(r.off)
		fmt.Printf("off-topic prompts (another conversation's questions): %d; %.1f%% got items from memory, %.2f items and %.0f characters each on average\n",
			r.off, 100*float64(r.offAny)/n, float64(r.offItems)/n, float64(r.offChars)/n)
	}
	return nil
}
