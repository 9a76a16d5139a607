// Command locomo measures retrieval on the LoCoMo long-term conversational
// memory benchmark (`make eval-locomo`; data in ../shared/eval/locomo-dev).
// Protocol (../shared/README.md): per conversation, every dialogue turn is
// saved as a memory entry ("speaker: text", dated), then each question is
// run as a search; turn-level recall@k = |evidence ∩ top-k| / |evidence|,
// averaged over questions, reported per category and overall, with MRR.
// The conversations are imported into throwaway repositories through the
// same application code the CLI uses.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/notes"
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
	flag.Parse()
	if err := run(*dir); err != nil {
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

type stats struct {
	n                     int
	r1, r5, r10, r50, mrr float64
}

func (s *stats) add(ranked []string, evidence map[string]bool) {
	s.n++
	hits := func(k int) float64 {
		c := 0
		for i, id := range ranked {
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
	for i, id := range ranked {
		if evidence[id] {
			s.mrr += 1 / float64(i+1)
			break
		}
	}
}

func run(dataDir string) error {
	os.Setenv("GIT_AUTHOR_NAME", "LoCoMo")
	os.Setenv("GIT_AUTHOR_EMAIL", "locomo@example.com")
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
		return err
	}
	queries := map[string][]query{}
	if err := readJSONL(filepath.Join(dataDir, "queries.jsonl"), func(q query) { queries[q.Conv] = append(queries[q.Conv], q) }); err != nil {
		return err
	}
	convs := make([]string, 0, len(turns))
	for c := range turns {
		convs = append(convs, c)
	}
	sort.Strings(convs)
	modes := []string{"bm25", "vector", "hybrid"}
	results := map[string]*modeStats{}
	for _, m := range modes {
		results[m] = &modeStats{byCat: map[int]*stats{}}
	}
	ctx := context.Background()
	start := time.Now()
	var embedTime time.Duration
	var model string
	for _, conv := range convs {
		ranked, info, et, err := searchConversation(ctx, turns[conv], queries[conv], modes)
		if err != nil {
			return fmt.Errorf("%s: %w", conv, err)
		}
		embedTime += et
		model = info
		for _, m := range modes {
			results[m].score(queries[conv], ranked[m])
		}
	}
	fmt.Printf("LoCoMo dev (%d conversations, %d questions with evidence) in %s (embedding %s)\nmodel: %s; fusion: 0.5 × bm25/max + 0.5 × cosine, plus session context, the best BM25 match first; time in questions read as of the day after each conversation; seed weights off (one tier, synthetic dates)\n",
		len(convs), results["bm25"].all.n, time.Since(start).Round(time.Millisecond), embedTime.Round(time.Millisecond), model)
	for _, m := range modes {
		fmt.Printf("\nretriever: %s\n", map[string]string{"bm25": "BM25 (FTS5, porter, stopwords dropped)", "vector": "vectors only (cosine)", "hybrid": "hybrid (0.5 × normalised BM25 + 0.5 × cosine; the 10 best lend 0.4 of it to the next entry of their session, 0.2 to the previous; the best BM25 match keeps first place)"}[m])
		if err := results[m].print(); err != nil {
			return err
		}
	}
	return nil
}

type modeStats struct {
	byCat     map[int]*stats
	all, core stats
}

func (r *modeStats) score(qs []query, ranked [][]string) {
	byCat, all, core := r.byCat, &r.all, &r.core
	{
		for i, q := range qs {
			ev := map[string]bool{}
			for _, e := range q.Evidence {
				for _, id := range strings.FieldsFunc(e, func(r rune) bool { return r == ';' || r == ',' || r == ' ' }) {
					ev[strings.ToLower(id)] = true
				}
			}
			if len(ev) == 0 {
				continue
			}
			if byCat[q.Category] == nil {
				byCat[q.Category] = &stats{}
			}
			byCat[q.Category].add(ranked[i], ev)
			all.add(ranked[i], ev)
			if q.Category <= 4 {
				core.add(ranked[i], ev)
			}
		}
	}
}

func (r *modeStats) print() error {
	byCat, all, core := r.byCat, &r.all, &r.core
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "category\tquestions\tR@1\tR@5\tR@10\tR@50\tMRR\t")
	names := map[int]string{1: "1 multi-hop", 2: "2 temporal", 3: "3 open-domain", 4: "4 single-hop", 5: "5 adversarial"}
	row := func(name string, s *stats) {
		n := float64(max(s.n, 1))
		fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t\n", name, s.n, s.r1/n, s.r5/n, s.r10/n, s.r50/n, s.mrr/n)
	}
	// The headline first: category 5 (adversarial) flatters recall.
	row("all 1-4", core)
	for c := 1; c <= 5; c++ {
		if s := byCat[c]; s != nil {
			row(names[c], s)
		}
	}
	row("all 1-5", all)
	return w.Flush()
}

// searchConversation imports a conversation into a fresh repository,
// embeds it, and returns per mode and question the dialogue ids of the top
// 50 results.
func searchConversation(ctx context.Context, turns []turn, qs []query, modes []string) (map[string][][]string, string, time.Duration, error) {
	dir, err := os.MkdirTemp("", "locomo")
	if err != nil {
		return nil, "", 0, err
	}
	defer os.RemoveAll(dir)
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		return nil, "", 0, fmt.Errorf("git init: %v %s", err, out)
	}
	// Each LoCoMo session is a memory session; its turns are saved a
	// second apart in the order they were spoken, as a live session would.
	reqs := make([]app.SaveRequest, len(turns))
	var last time.Time
	for i, t := range turns {
		created, _ := time.Parse("3:04 pm on 2 January, 2006", t.DateTime)
		created = created.Add(time.Duration(i) * time.Second)
		reqs[i] = app.SaveRequest{Content: t.Speaker + ": " + t.Text, Type: notes.TypeReference, Tags: []string{strings.ToLower(t.ID)},
			Created: created, SessionID: t.Conv + "-session-" + t.Session, AllowSecret: true}
		if created.After(last) {
			last = created
		}
	}
	// The questions are asked the day after the conversation ends: "last
	// year" or "recently" are read against that day (search --as-of).
	asOf := last.Add(24 * time.Hour)
	s, err := app.Open(dir, app.Options{RawScores: true, AsOf: asOf})
	if err != nil {
		return nil, "", 0, err
	}
	defer s.Close()
	if _, err := s.Memory().Import(ctx, reqs, false); err != nil {
		return nil, "", 0, err
	}
	start := time.Now()
	st, err := s.Recall().Embed(ctx, nil)
	if err != nil {
		return nil, "", 0, err
	}
	embedTime := time.Since(start)
	out := map[string][][]string{}
	for _, m := range modes {
		out[m] = make([][]string, len(qs))
		for i, q := range qs {
			hits, _, err := s.Recall().SearchWith(ctx, q.Question, app.Filter{Limit: 50}, m)
			if err != nil && err != cache.ErrNoWords {
				return nil, "", 0, err
			}
			for _, h := range hits {
				if len(h.Tags) > 0 {
					out[m][i] = append(out[m][i], h.Tags[0])
				}
			}
		}
	}
	return out, st.ID + " (" + st.Backend + " runtime)", embedTime, nil
}
