package app

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// accesses is the local use count of every entry, by id.
func accesses(t *testing.T, s *Service) map[string]int {
	t.Helper()
	c, err := s.openCache()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	_, err = c.Maintain(context.Background(), cache.DecayPass{All: true, DryRun: true, Judge: func(st cache.Standing) cache.Verdict {
		out[st.ID] = st.Usage.Accesses
		return cache.Verdict{}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// The prompt hook counts what it shows the agent, once per session: not
// the search hits it only scored, and not every prompt that repeats an
// item.
func TestPromptCountsWhatItShowsOncePerSession(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	old := now.AddDate(0, 0, -3)
	var reqs []SaveRequest
	for _, c := range []string{
		"billing retries back off exponentially up to a minute",
		"billing retries back off with jitter",
		"billing retries stop after five attempts",
		"the billing worker retries on timeouts only",
		"retries in billing are logged at warn level",
		"billing retry counts are in the metrics dashboard",
	} {
		reqs = append(reqs, SaveRequest{Content: c, Type: memory.TypeInsight, Created: old})
	}
	reqs = append(reqs, SaveRequest{Content: "deployed the new billing worker", Type: memory.TypeProgress, Created: now.Add(-time.Hour)})
	ents, err := s.Memory().Import(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		md, err := s.Agent().PromptContext(ctx, "s1", "how do billing retries back off?", 0)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && (!strings.Contains(md, "Related to this prompt") || !strings.Contains(md, "deployed the new billing worker")) {
			t.Fatalf("prompt context:\n%s", md)
		}
	}
	used := accesses(t, s)
	total, shown := 0, 0
	for _, e := range ents {
		total += used[e.ID]
		if used[e.ID] > 1 {
			t.Errorf("%q counted %d uses in one session", e.Content, used[e.ID])
		}
		if used[e.ID] == 1 {
			shown++
		}
	}
	if used[ents[6].ID] != 1 || shown != 3 || total != 3 {
		t.Errorf("uses after 5 prompts: %v (want the recent entry and the 2 injected matches, once each)", used)
	}
}

// Injection is bounded: each item at most 500 characters (the rest a
// show away), the whole within the budget, whatever was saved.
func TestPromptInjectionIsBounded(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	dir := testrepo.NewRepo(t)
	s, err := Open(dir, Options{Now: func() time.Time { return now }, Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	huge := strings.Repeat("The billing API reference describes every endpoint and its retries in detail. ", 220) // 17 KB
	ents, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: huge, Type: memory.TypeReference, Created: now.Add(-time.Hour)},
		{Content: "billing retries back off exponentially", Type: memory.TypeDecision, Created: now.AddDate(0, 0, -30)},
	})
	if err != nil {
		t.Fatal(err)
	}
	md, err := s.Agent().PromptContext(ctx, "s1", "how do billing retries back off?", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(md) > 1200 || !strings.Contains(md, "more characters: git synaptic show "+ShortID(ents[0].ID)) || !strings.Contains(md, "back off exponentially") {
		t.Fatalf("%d characters injected:\n%s", len(md), md)
	}
	testrepo.Git(t, dir, "config", "synaptic.promptBudget", "300")
	md, _ = s.Agent().PromptContext(ctx, "s2", "how do billing retries back off?", 0)
	if len(md) > 300 || !strings.Contains(md, ShortID(ents[0].ID)) {
		t.Errorf("over the configured budget of 300 (%d):\n%s", len(md), md)
	}
	if md, _ := s.Agent().PromptContext(ctx, "s3", "how do billing retries back off?", 150); len(md) > 150 {
		t.Errorf("over the given budget of 150 (%d):\n%s", len(md), md)
	}
}

// Marking an entry relevant shows it in full again in a session where it
// had decayed to a stub.
func TestRelevantResetsTheViewDecay(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	e, err := s.Memory().Save(ctx, SaveRequest{Content: "the nightly export runs at 02:00 UTC. It takes an hour.", Type: memory.TypeReference})
	if err != nil {
		t.Fatal(err)
	}
	var md string
	for i := 0; i < 11; i++ {
		md, _ = s.Agent().PromptContext(ctx, "s1", "continue", 0)
	}
	if !strings.Contains(md, "shown 11 times this session") {
		t.Fatalf("eleventh view is not a stub:\n%s", md)
	}
	if _, err := s.Memory().Feedback(ctx, e.ID, true, 0.5, "", ""); err != nil {
		t.Fatal(err)
	}
	if md, _ = s.Agent().PromptContext(ctx, "s1", "continue", 0); !strings.Contains(md, "It takes an hour.") {
		t.Fatalf("after relevant feedback the entry is not shown in full:\n%s", md)
	}
}

// Item heads give provenance: author and origin, pinning, and for a commit
// the branch it was indexed from.
func TestItemHead(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	var commit Entry
	commit.ID, commit.Type, commit.Branch, commit.Author, commit.Created = "0123456789abcdef", memory.TypeGitCommit, "release-2", "Ann <ann@x>", now.Add(-48*time.Hour)
	commit.Source = "git:history"
	if got, want := itemHead(commit, "Bob <bob@x>", now), "[01234567 · git_commit · 2d ago · Ann, git history · on release-2]"; got != want {
		t.Errorf("commit head %q, want %q", got, want)
	}
	var mine Entry
	mine.ID, mine.Type, mine.Branch, mine.Author, mine.Created, mine.Pinned = "fedcba9876543210", memory.TypeDecision, "main", "Bob <bob@x>", now, true
	if got, want := itemHead(mine, "Bob <bob@x>", now), "[fedcba98 · decision · just now · you · pinned]"; got != want {
		t.Errorf("decision head %q, want %q", got, want)
	}
}

// An entry older than a week that nobody used for a week collapses
// faster in view (in full once, a digest up to 3 times) than one in use
// (in full 3 times), and keeps that pace through the session.
func TestStaleEntriesCollapseFaster(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	// no model: matched by shared words, whatever model is installed
	s := openTest(t, Options{Now: func() time.Time { return now }, Model: "no-such-model"})
	ents, err := s.Memory().Import(ctx, []SaveRequest{
		{Content: "Billing retries back off exponentially, one second, then four, then sixteen, for three tries. The card network rate-limits faster retries.", Type: memory.TypeDecision, Created: now.AddDate(0, 0, -30)},
		{Content: "Billing retries are logged at warn level with the charge id and the attempt number in every line. The dashboard counts them.", Type: memory.TypeInsight, Created: now.AddDate(0, 0, -30)},
	})
	if err != nil {
		t.Fatal(err)
	}
	stale, used := ents[0], ents[1]
	c, _ := s.openCache()
	if err := c.RecordUse(ctx, cache.Use{IDs: []string{used.ID}, At: now.AddDate(0, 0, -2)}); err != nil {
		t.Fatal(err)
	}
	view := func(md, id string) string {
		for _, l := range strings.Split(md, "\n") {
			if strings.Contains(l, ShortID(id)) {
				switch {
				case strings.Contains(l, "times this session"):
					return "stub"
				case strings.HasSuffix(l, "…"):
					return "digest"
				}
				return "full"
			}
		}
		return "absent"
	}
	var got, gotUsed []string
	for i := 0; i < 5; i++ {
		md, err := s.Agent().PromptContext(ctx, "s1", "how do billing retries work and where are they logged?", 0)
		if err != nil {
			t.Fatal(err)
		}
		got, gotUsed = append(got, view(md, stale.ID)), append(gotUsed, view(md, used.ID))
	}
	if want := "full digest digest stub stub"; strings.Join(got, " ") != want {
		t.Errorf("stale entry: %v, want %s", got, want)
	}
	if want := "full full full digest digest"; strings.Join(gotUsed, " ") != want {
		t.Errorf("entry in use: %v, want %s", gotUsed, want)
	}
}

// A prompt brings at most 3 matches, in the search's order, each strong
// enough (similar, and at least half the best score); memory of any age
// qualifies; an unrelated entry does not come along.
func TestPromptBringsUpToThreeStrongMatches(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }, Embedder: wordEmbedder{}})
	reqs := []SaveRequest{
		{Content: "Billing retries back off exponentially after a declined card.", Type: memory.TypeDecision, Created: now.AddDate(-2, 0, 0)},
		{Content: "Billing retries are logged with the card id.", Type: memory.TypeInsight, Created: now.AddDate(0, -5, 0)},
		{Content: "Billing retries stop after three declined cards.", Type: memory.TypeDecision, Created: now.AddDate(0, -1, 0)},
		{Content: "Billing retries of a declined card wait for the card network.", Type: memory.TypeIssue, Created: now.AddDate(0, 0, -3)},
		{Content: "The docs site is built with hugo.", Type: memory.TypeReference, Created: now.AddDate(0, 0, -3)},
	}
	for i := range 30 { // the rest of the project's memory
		reqs = append(reqs, SaveRequest{Content: fmt.Sprintf("Parser release %d handles case %d.", i, i), Type: memory.TypeProgress, Created: now.AddDate(0, -i, -4)})
	}
	ents, err := s.Memory().Import(ctx, reqs)
	if err != nil {
		t.Fatal(err)
	}
	// every entry with its vector, as the warm process leaves them (a
	// search embeds only a handful in passing)
	if _, err := s.Recall().Embed(ctx, nil); err != nil {
		t.Fatal(err)
	}
	md, err := s.Agent().PromptContext(ctx, "sess-warm", "how do billing retries of a declined card back off?", 0)
	if err != nil {
		t.Fatal(err)
	}
	related := md[strings.Index(md, "## Related to this prompt"):]
	if n := strings.Count(related, "\n- ["); n != 3 {
		t.Errorf("%d matches, want 3:\n%s", n, md)
	}
	if !strings.Contains(related, ShortID(ents[0].ID)) {
		t.Errorf("the two-year-old best match is missing:\n%s", md)
	}
	if strings.Contains(md, ShortID(ents[4].ID)) {
		t.Errorf("an unrelated entry came along:\n%s", md)
	}
}

// The hot items are the day's newest that are not the session's own: a
// session whose handoffs and exchanges outnumber a first page still gets
// the day's other memory.
func TestHotItemsOutlastTheSessionsOwnMemory(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, Options{Now: func() time.Time { return now }})
	reqs := []SaveRequest{
		{Content: "the staging database was restored from last night's backup", Type: memory.TypeProgress, Created: now.Add(-5 * time.Hour)},
		{Content: "we pin the billing worker to two replicas", Type: memory.TypeDecision, Created: now.Add(-4 * time.Hour)},
	}
	for i := range 2 * hotPage {
		reqs = append(reqs, SaveRequest{Content: fmt.Sprintf("handoff %d of this session", i), Type: memory.TypeHandoff, SessionID: "s1", Created: now.Add(-time.Duration(i+1) * time.Minute)})
	}
	if _, err := s.Memory().Import(ctx, reqs); err != nil {
		t.Fatal(err)
	}
	md, err := s.Agent().PromptContext(ctx, "s1", "ok", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "restored from last night's backup") || !strings.Contains(md, "two replicas") || strings.Contains(md, "of this session") {
		t.Errorf("the day's other memory is not what the prompt gets:\n%s", md)
	}
	md, _ = s.Agent().PromptContext(ctx, "s2", "ok", 0) // another session: its newest
	if strings.Count(md, "of this session") != maxHot {
		t.Errorf("another session does not get the %d newest:\n%s", maxHot, md)
	}
}

// TestContentWordsSplitsAsTheirPattern: contentWords finds the words the
// pattern [\p{L}\p{N}_]+ finds (less stopwords and single letters), in
// any script, with digits, underscores, marks and invalid UTF-8 between.
func TestContentWordsSplitsAsTheirPattern(t *testing.T) {
	re := regexp.MustCompile(`[\p{L}\p{N}_]+`)
	for _, text := range []string{
		"", "a", "The pane's RESIZE fixed in layout_tree.c (issue #5511)!",
		"naïve café über straße ΔΣ λόγος Москва 東京タワー ١٢٣ Ⅻ ½",
		"snake_case __init__ x86-64 v2.3.1 e\u0301cole a\x80b \xff\xfe tail",
		"tabs\tand\nnewlines\r\nand\u00a0nbsp and\u2003em-space end_",
	} {
		want := map[string]bool{}
		for _, w := range re.FindAllString(strings.ToLower(text), -1) {
			if !cache.Stopword(w) && len(w) > 1 {
				want[w] = true
			}
		}
		got := contentWords(text)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("contentWords(%q) = %v, want %v", text, got, want)
		}
	}
}
