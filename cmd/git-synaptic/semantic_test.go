package main_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// modelHome is where 'make model' installed the model; the semantic tests
// fail (never skip) without it.
func modelHome(t *testing.T) string {
	t.Helper()
	home := os.Getenv("GIT_SYNAPTIC_HOME")
	if _, err := os.Stat(filepath.Join(home, "models", "use-lite", "manifest.json")); home == "" || err != nil {
		t.Fatalf("no embedding model in GIT_SYNAPTIC_HOME=%q; run 'make model' (make test does)", home)
	}
	return home
}

func TestHybridSearchFindsParaphrases(t *testing.T) {
	modelHome(t)
	dir := testrepo.NewRepo(t)
	build := save(t, dir, "the build fails because sqlite is missing on the CI runners", "--type", "issue")
	save(t, dir, "we chose postgres for the billing service", "--type", "decision")
	save(t, dir, "lunch on fridays is at the thai place", "--type", "insight")

	// no word in common with the issue: only the vectors can find it
	r := run(t, dir, "", "search", "compilation error: library not found", "--explain")
	if r.code != 0 || !strings.Contains(r.out, "mode hybrid, model use-lite@") || !strings.Contains(r.out, build[:8]) {
		t.Fatalf("paraphrase not found: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if strings.Contains(r.out, "thai") {
		t.Errorf("unrelated entry above the similarity floor:\n%s", r.out)
	}
	// BM25 alone cannot
	if out := ok(t, dir, "search", "compilation error: library not found", "--mode", "bm25"); strings.Contains(out, build[:8]) {
		t.Errorf("bm25 found a paraphrase without shared words:\n%s", out)
	}
	var hits []struct {
		ID      string  `json:"id"`
		VecRank int     `json:"vector_rank"`
		Cosine  float64 `json:"cosine"`
		Weight  float64 `json:"weight"`
	}
	if err := json.Unmarshal([]byte(ok(t, dir, "search", "database for invoices", "--mode", "vector", "--json")), &hits); err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].VecRank != 1 || hits[0].Cosine < 0.45 || hits[0].Weight <= 0 {
		t.Fatalf("vector search: %+v", hits)
	}

	var st struct {
		ID       string `json:"id"`
		Backend  string `json:"backend"`
		Embedded int    `json:"embedded"`
		Entries  int    `json:"entries"`
	}
	json.Unmarshal([]byte(ok(t, dir, "model", "status", "--json")), &st)
	if st.Embedded != 3 || st.Entries != 3 || !strings.HasPrefix(st.ID, "use-lite@") {
		t.Fatalf("model status: %+v", st)
	}

	// The vectors outlive the cache: a rebuilt cache finds them again.
	os.Remove(filepath.Join(dir, ".git", "synaptic", "cache.db"))
	if out := ok(t, dir, "search", "compilation error: library not found"); !strings.Contains(out, build[:8]) {
		t.Fatalf("after a cache rebuild:\n%s", out)
	}
	// a corrupt vector store is rebuilt like the cache
	os.WriteFile(filepath.Join(dir, ".git", "synaptic", "vectors.db"), []byte(strings.Repeat("garbage!", 4096)), 0o644)
	os.Remove(filepath.Join(dir, ".git", "synaptic", "vectors.db-wal"))
	if out := ok(t, dir, "search", "compilation error: library not found"); !strings.Contains(out, build[:8]) {
		t.Fatalf("after a corrupt vector store:\n%s", out)
	}
	// so is a deleted one
	os.Remove(filepath.Join(dir, ".git", "synaptic", "vectors.db"))
	os.Remove(filepath.Join(dir, ".git", "synaptic", "vectors.db-wal"))
	if out := ok(t, dir, "search", "compilation error: library not found"); !strings.Contains(out, build[:8]) {
		t.Fatalf("after a deleted vector store:\n%s", out)
	}
	// and the pure-Go runtime ranks the same way
	r = runEnv(t, dir, []string{"GIT_SYNAPTIC_EMBED_BACKEND=go"}, "search", "compilation error: library not found", "--explain")
	if r.code != 0 || !strings.Contains(r.out, "(go runtime)") || !strings.Contains(r.out, build[:8]) {
		t.Fatalf("go runtime: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
}

// Right after a reindex, model status counts the vectors the vector store
// kept (before, it said "embedded 0 of N" until the next search), and a
// commit indexed again after a reindex gets its old vector back.
func TestModelStatusAfterReindexCountsKeptVectors(t *testing.T) {
	modelHome(t)
	dir := testrepo.NewRepo(t)
	for _, text := range []string{"we chose postgres for billing", "the retry loop backs off 1/4/16 s", "deploys go out on mondays"} {
		save(t, dir, text)
	}
	ok(t, dir, "index")
	ok(t, dir, "embed")
	status := func() (embedded, entries int) {
		var st struct{ Embedded, Entries int }
		if err := json.Unmarshal([]byte(ok(t, dir, "model", "status", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.Embedded, st.Entries
	}
	before, all := status()
	if before != all || all < 4 { // three entries and the repository's commit
		t.Fatalf("after embed: %d of %d embedded", before, all)
	}
	ok(t, dir, "reindex")
	// reindex itself gave the entries their vectors back: the first
	// search has nothing to restore (40 s at a million entries)
	c, _, err := cache.Open(filepath.Join(dir, ".git", "synaptic", "cache.db"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := c.UseStoredModel(context.Background()); !ok || err != nil {
		t.Fatalf("no model recorded after reindex: %v", err)
	}
	have, total, err := c.VectorCounts(context.Background())
	c.Close()
	if err != nil || have != total || total < 3 {
		t.Fatalf("right after reindex: %d of %d entries have their vectors (%v)", have, total, err)
	}
	ok(t, dir, "index")
	if got, total := status(); got != total || total != all {
		t.Errorf("after reindex: embedded %d of %d, want %d of %d", got, total, all, all)
	}
}

func TestSearchWithoutModelFallsBackLexically(t *testing.T) {
	dir := testrepo.NewRepo(t)
	id := save(t, dir, "we chose postgres for the billing service")
	empty := []string{"GIT_SYNAPTIC_HOME=" + t.TempDir()}
	r := runEnv(t, dir, empty, "search", "postgres")
	if r.code != 0 || !strings.Contains(r.out, id[:8]) || !strings.Contains(r.err, "lexical search (BM25 only)") {
		t.Fatalf("fallback: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if r := runEnv(t, dir, empty, "search", "postgres", "--mode", "vector"); r.code != 3 || !strings.Contains(r.err, "model install") {
		t.Fatalf("vector mode without a model: exit %d %s", r.code, r.err)
	}
	if r := runEnv(t, dir, empty, "status"); r.code != 0 || !strings.Contains(r.out, "search: lexical (BM25 only)") {
		t.Fatalf("status without a model: exit %d %s %s", r.code, r.out, r.err)
	}
	if r := runEnv(t, dir, empty, "model", "status"); r.code != 0 || !strings.Contains(r.out, "lexical") {
		t.Fatalf("model status without a model: exit %d %s %s", r.code, r.out, r.err)
	}
	if r := run(t, dir, "", "search", "postgres", "--mode", "psychic"); r.code != 2 {
		t.Fatalf("bad mode: exit %d", r.code)
	}
}

func TestModelInstallFromFolder(t *testing.T) {
	src := filepath.Join(modelHome(t), "models", "use-lite")
	home := t.TempDir()
	env := []string{"GIT_SYNAPTIC_HOME=" + home}
	dir := testrepo.NewRepo(t)
	if r := runEnv(t, dir, env, "model", "install", "copy", "--from", src); r.code != 0 || !strings.Contains(r.out, "installed copy@") {
		t.Fatalf("install --from: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	var list []struct {
		Name string `json:"name"`
		Dim  int    `json:"dim"`
	}
	json.Unmarshal([]byte(runEnv(t, dir, env, "model", "list", "--json").out), &list)
	if len(list) != 1 || list[0].Name != "copy" || list[0].Dim != 512 {
		t.Fatalf("model list: %+v", list)
	}
	// a broken folder is refused and the installed model is untouched
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, "model.onnx"), []byte("not onnx"), 0o644)
	os.WriteFile(filepath.Join(bad, "tokenizer.json"), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(bad, "config.json"), []byte(`{"hidden_size": 512}`), 0o644)
	if r := runEnv(t, dir, env, "model", "install", "copy", "--from", bad); r.code == 0 {
		t.Fatal("broken model installed")
	}
	if r := runEnv(t, dir, append(env, "GIT_SYNAPTIC_MODEL=copy"), "model", "status"); r.code != 0 || !strings.Contains(r.out, "model copy@") {
		t.Fatalf("model after a failed reinstall: exit %d\n%s%s", r.code, r.out, r.err)
	}
	if r := runEnv(t, dir, env, "model", "install", "nonesuch"); r.code != 2 {
		t.Fatalf("unknown model: exit %d", r.code)
	}
}

func TestIntelligenceCommands(t *testing.T) {
	modelHome(t)
	dir := testrepo.NewRepo(t)
	var ids []string
	for _, s := range []string{"TestSync times out on CI under load", "TestSync timed out again on the CI runner", "TestSync times out on CI under heavy load"} {
		ids = append(ids, save(t, dir, s, "--type", "issue"))
	}
	// a repeat is saved, linked and reported (by words: save never loads the model)
	r := run(t, dir, "", "save", "TestSync times out on CI under load", "--type", "issue")
	if r.code != 0 || !strings.Contains(r.err, "near-duplicate of "+ids[0][:8]) {
		t.Fatalf("near-duplicate save: exit %d\n%s", r.code, r.err)
	}
	out := ok(t, dir, "patterns")
	if !strings.Contains(out, "[Pattern: seen 4 times since") {
		t.Fatalf("patterns:\n%s", out)
	}
	if out := ok(t, dir, "search", "TestSync"); !strings.Contains(out, "[Pattern: seen 4 times") {
		t.Fatalf("search lacks the pattern label:\n%s", out)
	}
	if out := ok(t, dir, "consolidate"); !strings.Contains(out, "group 1 (4 entries)") || !strings.Contains(out, "longterm summary") {
		t.Fatalf("consolidate:\n%s", out)
	}
	if out := ok(t, dir, "patterns", "resolve", ids[1][:8]); !strings.Contains(out, "4 issues") {
		t.Fatalf("resolve:\n%s", out)
	}
	if out := ok(t, dir, "patterns", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("patterns after resolve: %s", out)
	}
	if r := run(t, dir, "", "patterns", "resolve", "abcd1234"); r.code != 3 {
		t.Fatalf("resolve unknown: exit %d", r.code)
	}

	save(t, dir, "always run go vet before committing", "--type", "rule")
	corr := save(t, dir, "stop running go vet before committing, it is too slow", "--tag", "correction")
	out = ok(t, dir, "rules", "pending")
	if !strings.Contains(out, corr[:8]) || !strings.Contains(out, "may conflict with rule") {
		t.Fatalf("rules pending:\n%s", out)
	}
	rule := strings.TrimSpace(ok(t, dir, "rules", "accept", corr[:8]))
	if out := ok(t, dir, "rules"); !strings.Contains(out, rule[:8]) {
		t.Fatalf("accepted rule not listed:\n%s", out)
	}
	if out := ok(t, dir, "rules", "pending"); !strings.Contains(out, "no pending rules") {
		t.Fatalf("still pending:\n%s", out)
	}
	// dismiss reports what it did, as accept, pin and archive do
	other := save(t, dir, "don't push on fridays, we deploy on mondays", "--tag", "correction")
	if out := ok(t, dir, "rules", "dismiss", other[:8]); out != "dismiss "+other+"\n" {
		t.Fatalf("rules dismiss printed %q", out)
	}
	if out := ok(t, dir, "rules", "pending"); !strings.Contains(out, "no pending rules") {
		t.Fatalf("a dismissed correction is still pending:\n%s", out)
	}
	// without a model the vector features say why
	if r := runEnv(t, dir, []string{"GIT_SYNAPTIC_HOME=" + t.TempDir()}, "patterns"); r.code != 3 || !strings.Contains(r.err, "model install") {
		t.Fatalf("patterns without a model: exit %d %s", r.code, r.err)
	}
}

// A search that loads ONNX Runtime writes nothing outside the git dir and
// the model home: no telemetry database or device id under the home
// directory, no /tmp/mat-debug-PID.log (TMPDIR is where the runtime
// writes it).
func TestModelLoadWritesNothingOutside(t *testing.T) {
	modelHome(t)
	dir := testrepo.NewRepo(t)
	save(t, dir, "the cache lives in the git dir")
	home, tmp := t.TempDir(), t.TempDir()
	env := []string{"HOME=" + home, "TMPDIR=" + tmp, "XDG_CACHE_HOME=", "XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	if r := runEnv(t, dir, env, "search", "where is the cache"); r.code != 0 || !strings.Contains(r.out, "git dir") || !strings.Contains(ok(t, dir, "model", "status"), "ort") {
		t.Fatalf("search: %+v", r)
	}
	for _, d := range []string{home, tmp} {
		filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && !e.IsDir() {
				t.Errorf("the search wrote %s", p)
			}
			return nil
		})
	}
}

// A save that says what an indexed commit's message says is saved: the
// near-duplicates it links to are saved memory, never the commit (whose
// id is git's). Both ways: by words from the command line, by meaning
// through the MCP server.
func TestASaveLikeACommitMessageIsSaved(t *testing.T) {
	modelHome(t)
	dir := testrepo.NewRepo(t)
	msg := "Fix the fallback implementation of getpeereid on old kernels, reported by the packagers of two distributions"
	commitFiles(t, dir, msg, "a")
	ok(t, dir, "index")
	commit := strings.TrimSpace(testrepo.Git(t, dir, "rev-parse", "HEAD"))
	r := run(t, dir, "", "save", msg, "--type", "progress")
	first := strings.TrimSpace(r.out)
	if r.code != 0 || len(first) != 32 || strings.Contains(r.err, commit[:8]) {
		t.Fatalf("save of a commit's message: exit %d %q\n%s", r.code, r.out, r.err)
	}
	r = run(t, dir, "", "save", msg, "--type", "progress")
	if r.code != 0 || !strings.Contains(r.err, "near-duplicate of "+first[:8]) || strings.Contains(r.err, commit[:8]) {
		t.Fatalf("a second save: exit %d %q\n%s", r.code, r.out, r.err)
	}
	c := startMCP(t, dir)
	res := c.tool("context_save", map[string]any{"content": msg + ".", "type": "progress"})
	var e struct {
		ID   string   `json:"id"`
		Dups []string `json:"near_duplicates"`
	}
	json.Unmarshal(res.Structured, &e)
	if res.IsError || len(e.ID) != 32 || len(e.Dups) == 0 || strings.Contains(res.Content[0].Text, commit[:8]) {
		t.Fatalf("an MCP save of a commit's message: %+v %+v", res, e)
	}
	for _, d := range e.Dups {
		if len(d) != 32 {
			t.Errorf("near-duplicate %q is not a saved entry", d)
		}
	}
}
