package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// projectsEnv gives a test its own project list and no model (so that
// cross-project matching goes by words, the same on every machine).
func projectsEnv(t *testing.T) []string {
	dir := t.TempDir()
	return []string{"GIT_SYNAPTIC_PROJECTS=" + filepath.Join(dir, "projects.json"), "GIT_SYNAPTIC_HOME=" + filepath.Join(dir, "no-model")}
}

func okEnv(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	r := runEnv(t, dir, env, args...)
	if r.code != 0 {
		t.Fatalf("git-synaptic %s: exit %d\nstdout: %s\nstderr: %s", strings.Join(args, " "), r.code, r.out, r.err)
	}
	return r.out
}

type projectHit struct {
	ID          string `json:"id"`
	Content     string `json:"content"`
	Project     string `json:"project"`
	ProjectPath string `json:"project_path"`
	Here        bool   `json:"here"`
}

func searchAll(t *testing.T, dir string, env []string, query string) []projectHit {
	t.Helper()
	var hits []projectHit
	out := okEnv(t, dir, env, "search", "--all-projects", "--json", query)
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("search --all-projects --json: %v\n%s", err, out)
	}
	return hits
}

// Three repositories of one user: init registers them; a search across
// projects finds and labels memory of each, skips a moved one, and works
// outside any repository; the session start shows the other projects'
// shared rules and insights that resemble this one, never their private
// memory, and nothing of theirs reaches this project's remote.
func TestProjectsSearchAndSessionContextAcrossRepositories(t *testing.T) {
	env := projectsEnv(t)
	clones, remote := testrepo.NewReposAndRemote(t, 1)
	a, b, c := clones[0], testrepo.NewRepo(t), testrepo.NewRepo(t)
	for _, dir := range []string{a, b, c} {
		if out := okEnv(t, dir, env, "init"); !strings.Contains(out, "project list += ") {
			t.Errorf("init does not say it registered the repository: %s", out)
		}
	}
	if out := okEnv(t, a, env, "init"); strings.Contains(out, "project list") {
		t.Errorf("a second init registers again: %s", out)
	}
	var listed []struct{ Name, Path, Problem string }
	if err := json.Unmarshal([]byte(okEnv(t, b, env, "projects", "list", "--json")), &listed); err != nil || len(listed) != 3 {
		t.Fatalf("projects list: %v %+v", err, listed)
	}
	bName := ""
	for _, p := range listed {
		if p.Path == b {
			bName = p.Name
		}
	}
	if bName == "" {
		t.Fatalf("projects list lacks %s: %+v", b, listed)
	}

	okEnv(t, a, env, "save", "we deploy the api with helm charts to kubernetes", "--type", "decision")
	okEnv(t, a, env, "save", "the api keeps sessions in postgres", "--type", "insight")
	const helm = "helm upgrades need --atomic: a failed kubernetes deploy otherwise leaves the release stuck"
	const private = "the helm deploy token for kubernetes staging is in vault under ops-zebra-91"
	const unrelated = "use pnpm for the marketing site's stylesheet pipeline"
	okEnv(t, b, env, "save", helm, "--type", "insight", "--tier", "longterm")
	okEnv(t, b, env, "save", private, "--type", "rule", "--private")
	rule := strings.TrimSpace(okEnv(t, b, env, "save", "always pin helm chart versions in kubernetes deploys", "--type", "rule"))
	okEnv(t, c, env, "save", unrelated, "--type", "rule")

	hits := searchAll(t, a, env, "helm atomic deploy")
	if len(hits) == 0 || hits[0].Content != helm || hits[0].ProjectPath != b || hits[0].Here || hits[0].Project == "" {
		t.Fatalf("search --all-projects: want b's insight first, labelled with b: %+v", hits)
	}
	if hits := searchAll(t, a, env, "vault ops-zebra-91"); len(hits) != 1 || hits[0].Content != private {
		t.Errorf("the user's own private memory in another project is not found: %+v", hits)
	}
	text := okEnv(t, a, env, "search", "--all-projects", "helm atomic")
	if !strings.Contains(text, bName+"  ") {
		t.Errorf("text results do not name the project:\n%s", text)
	}
	outside := t.TempDir()
	if hits := searchAll(t, outside, env, "pnpm stylesheet"); len(hits) != 1 || hits[0].ProjectPath != c {
		t.Errorf("search --all-projects outside a repository: %+v", hits)
	}

	md := okEnv(t, a, env, "hook", "session-start", "--format", "markdown")
	i := strings.Index(md, "## From other projects")
	if i < 0 {
		t.Fatalf("session start has no section from other projects:\n%s", md)
	}
	other := md[i:]
	if !strings.Contains(other, helm) || !strings.Contains(other, "project "+bName+"]") {
		t.Errorf("the section lacks b's helm insight with its project:\n%s", other)
	}
	if strings.Contains(md, "ops-zebra-91") {
		t.Errorf("another project's private memory was injected:\n%s", md)
	}
	if strings.Contains(other, "pnpm") {
		t.Errorf("an unrelated rule was injected:\n%s", other)
	}
	testrepo.Git(t, a, "config", "synaptic.crossProject", "false")
	if md := okEnv(t, a, env, "hook", "session-start", "--format", "markdown"); strings.Contains(md, "From other projects") {
		t.Errorf("synaptic.crossProject false does not turn the section off:\n%s", md)
	}

	// Another project's entry is not this one's: it cannot become a rule
	// here, and nothing of b reaches a's remote.
	if r := runEnv(t, a, env, "rules", "accept", rule); r.code != 3 {
		t.Errorf("rules accept of another project's entry: exit %d, %s", r.code, r.err)
	}
	okEnv(t, a, env, "sync")
	if mem := remoteMemory(t, remote); !strings.Contains(mem, "helm charts to kubernetes") || strings.Contains(mem, "ops-zebra-91") || strings.Contains(mem, "--atomic") || strings.Contains(mem, "pin helm chart") {
		t.Errorf("a's remote holds memory of another project (or lacks a's own):\n%s", mem)
	}

	// A moved project is reported and skipped; remove takes it out.
	moved := c + "-moved"
	if err := os.Rename(c, moved); err != nil {
		t.Fatal(err)
	}
	r := runEnv(t, a, env, "search", "--all-projects", "helm")
	if r.code != 0 || !strings.Contains(r.err, "skipped") || !strings.Contains(r.err, "moved or deleted") || !strings.Contains(r.out, "--atomic") {
		t.Errorf("a moved project breaks the search or goes unreported: exit %d\n%s\n%s", r.code, r.out, r.err)
	}
	if out := okEnv(t, a, env, "projects"); !strings.Contains(out, c+"  (moved or deleted)") {
		t.Errorf("projects does not mark the moved project:\n%s", out)
	}
	okEnv(t, a, env, "projects", "remove", c)
	if r := runEnv(t, a, env, "projects", "remove", c); r.code != 3 || !strings.Contains(r.err, "not in your projects") {
		t.Errorf("removing twice: exit %d, %s", r.code, r.err)
	}
	if out := okEnv(t, moved, env, "projects", "add"); !strings.Contains(out, "added "+moved) {
		t.Errorf("projects add: %s", out)
	}

	// The MCP server searches all projects on request, marking the others.
	mc := startMCPEnv(t, a, append(envWithoutSession(), env...))
	res := mc.tool("context_search", map[string]any{"query": "helm atomic", "scope": "all"})
	if !strings.Contains(res.Content[0].Text, "--atomic") || !strings.Contains(res.Content[0].Text, "from project "+bName) || !strings.Contains(res.Content[0].Text, "not instructions") {
		t.Errorf("context_search scope all:\n%s", res.Content[0].Text)
	}
	if res := mc.tool("context_search", map[string]any{"query": "helm atomic"}); strings.Contains(res.Content[0].Text, "--atomic") {
		t.Errorf("context_search searches other projects by default:\n%s", res.Content[0].Text)
	}
}

// context_cochanges answers for another registered project, by name.
func TestCochangesOfAnotherProjectOverMCP(t *testing.T) {
	env := projectsEnv(t)
	here, other := testrepo.NewRepo(t), filepath.Join(t.TempDir(), "payments")
	if out, err := exec.Command("git", "init", "-q", other).CombinedOutput(); err != nil {
		t.Fatalf("%v %s", err, out)
	}
	testrepo.Git(t, other, "config", "user.name", "Test User")
	testrepo.Git(t, other, "config", "user.email", "test@example.com")
	for range 2 {
		commitFiles(t, other, "ledger change", "ledger.go", "ledger_test.go")
	}
	for _, dir := range []string{here, other} {
		okEnv(t, dir, env, "init")
	}
	okEnv(t, other, env, "index")
	c := startMCPEnv(t, here, append(os.Environ(), env...))
	c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "test", "version": "1"}})
	r := c.tool("context_cochanges", map[string]any{"file": "ledger.go", "project": "payments"})
	if r.IsError || !strings.Contains(r.Content[0].Text, "ledger_test.go (2 times") {
		t.Fatalf("cochanges in payments:\n%s", r.Content[0].Text)
	}
	if r := c.tool("context_cochanges", map[string]any{"file": "ledger.go"}); r.IsError || !strings.Contains(r.Content[0].Text, "no indexed commit touches it") {
		t.Fatalf("cochanges here:\n%s", r.Content[0].Text)
	}
}

// "From other projects" knows a project by its history: another clone of
// this repository is this project, whatever its folder is called, and a
// rule this project has already, or that several projects share, is not
// repeated.
func TestOtherProjectsAreKnownByTheirHistory(t *testing.T) {
	env := projectsEnv(t)
	clones, _ := testrepo.NewReposAndRemote(t, 2)
	a, twin, b, c := clones[0], clones[1], testrepo.NewRepo(t), testrepo.NewRepo(t)
	for _, dir := range []string{a, twin, b, c} {
		okEnv(t, dir, env, "init")
	}
	const everywhere = "always run helm lint before a kubernetes deploy"
	const shared = "pin helm chart versions in every kubernetes deploy"
	okEnv(t, a, env, "save", "we deploy the api with helm charts to kubernetes", "--type", "decision")
	for _, dir := range []string{a, b, c} {
		okEnv(t, dir, env, "save", everywhere, "--type", "rule")
	}
	for _, dir := range []string{b, c} {
		okEnv(t, dir, env, "save", shared, "--type", "rule")
	}
	okEnv(t, twin, env, "save", "helm values for kubernetes live in deploy/values.yaml", "--type", "rule")
	okEnv(t, b, env, "save", "helm upgrades need --atomic: a failed kubernetes deploy otherwise leaves the release stuck", "--type", "insight", "--tier", "longterm")

	md := okEnv(t, a, env, "hook", "session-start", "--format", "markdown")
	i := strings.Index(md, "## From other projects")
	if i < 0 {
		t.Fatalf("no section from other projects:\n%s", md)
	}
	other := md[i:]
	if !strings.Contains(other, "--atomic") {
		t.Errorf("the section lacks b's insight:\n%s", other)
	}
	if strings.Contains(other, "deploy/values.yaml") {
		t.Errorf("another clone of this repository is listed as another project:\n%s", other)
	}
	if strings.Contains(other, everywhere) || strings.Count(other, shared) != 1 {
		t.Errorf("a rule this project has is repeated, or one two projects share is not said once:\n%s", other)
	}
}

// A user's first project, alone in the registry or beside one deleted
// since, starts a session with its own memory and no section from other
// projects.
func TestSessionStartWithNoOtherProject(t *testing.T) {
	env := projectsEnv(t)
	a, gone := testrepo.NewRepo(t), testrepo.NewRepo(t)
	okEnv(t, a, env, "init")
	okEnv(t, a, env, "save", "we deploy the api with helm charts", "--type", "decision")
	for _, when := range []string{"alone", "beside a deleted project"} {
		if when != "alone" {
			okEnv(t, gone, env, "init")
			if err := os.RemoveAll(gone); err != nil {
				t.Fatal(err)
			}
		}
		md := okEnv(t, a, env, "hook", "session-start", "--format", "markdown")
		if !strings.Contains(md, "helm charts") || strings.Contains(md, "From other projects") {
			t.Errorf("%s: the session start reads\n%s", when, md)
		}
	}
}
