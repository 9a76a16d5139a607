package app

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/internal/directive"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

// A Session lends each request the same Service, one request at a time,
// with that request's own values; a request that loads a lent model does
// not change what the next one does (a session start reads directives by
// meaning only where the model is loaded), so answers match a fresh
// command's.
func TestSessionRequestsAreAlikeAndAlone(t *testing.T) {
	ctx := context.Background()
	dir := testrepo.NewRepo(t)
	lent := 0
	opts := Options{Warn: io.Discard, LoadEmbedder: func(string, string) (Embedder, error) { lent++; return wordEmbedder{}, nil }}
	sess, err := OpenSession(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	fresh, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()

	// a part of a template that the words miss: found only by meaning
	meant := ""
	for _, tpl := range directiveTemplates {
		words := strings.Fields(tpl)
		for k := 1; k < len(words) && meant == ""; k++ {
			part := strings.Join(words[k:], " ")
			v, _ := wordEmbedder{}.Embed(ctx, []string{tpl, part})
			if !directive.Is(part, memory.TypeInsight) && embed.Cosine(v[0], v[1]) >= directiveCosine {
				meant = part
			}
		}
	}
	if meant == "" {
		t.Fatal("every template is caught by the words: the test proves nothing")
	}
	if _, err := fresh.Memory().Save(ctx, SaveRequest{Content: meant, Type: "insight"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.Memory().Save(ctx, SaveRequest{Content: "billing retries back off 1, 4 and 16 seconds", Type: "decision"}); err != nil {
		t.Fatal(err)
	}
	if err := sess.Do(ctx, func(s *Service) error {
		_, _, err := s.Recall().Search(ctx, SearchRequest{Query: "billing retries"})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if lent == 0 {
		t.Fatal("the hybrid search did not load the model: the test proves nothing")
	}
	start := func(s *Service) string { return sessionStart(t, s) }
	var warm string
	sess.Do(ctx, func(s *Service) error { warm = start(s); return nil })
	if want := start(fresh); warm != want {
		t.Errorf("session start in a Session:\n%s\nin a fresh Service:\n%s", warm, want)
	}
	// what the Session remembers between starts (the pending rules) follows
	// memory changed by another process
	pnpm, err := fresh.Memory().Save(ctx, SaveRequest{Content: "From now on, use pnpm for installs", Type: "insight"})
	if err != nil {
		t.Fatal(err)
	}
	for _, step := range []func(){func() {}, func() {
		if _, err := fresh.Agent().AcceptRule(ctx, pnpm.ID, "pnpm"); err != nil {
			t.Fatal(err)
		}
	}} {
		step()
		sess.Do(ctx, func(s *Service) error { warm = start(s); return nil })
		if want := start(fresh); warm != want {
			t.Errorf("session start in a Session after a change:\n%s\nin a fresh Service:\n%s", warm, want)
		}
		if pending := strings.Contains(warm, "## Pending rules") && strings.Contains(warm, "use pnpm"); pending == strings.Contains(warm, "## Rules") {
			t.Errorf("the correction is not pending, then a rule:\n%s", warm)
		}
	}

	// per-request values apply to their request only
	var w1 bytes.Buffer
	asOf := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	sess.DoAs(ctx, Per{Warn: &w1, AsOf: asOf, Session: "req-1"}, func(s *Service) error {
		if s.per.AsOf != asOf || s.sessionID() != "req-1" || s.per.Warn != &w1 {
			t.Errorf("request values not applied: %v %q", s.per.AsOf, s.sessionID())
		}
		return nil
	})
	sess.Do(ctx, func(s *Service) error {
		if !s.per.AsOf.IsZero() || s.per.Session != "" || s.per.Warn != io.Discard {
			t.Errorf("request values outlived their request: %v %q", s.per.AsOf, s.per.Session)
		}
		return nil
	})

	// one request at a time; a waiting request gives up with its context
	var mu sync.Mutex
	running, most := 0, 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sess.Do(ctx, func(s *Service) error {
				mu.Lock()
				running++
				most = max(most, running)
				mu.Unlock()
				_, err := s.Recall().List(ctx, Filter{Limit: 5})
				mu.Lock()
				running--
				mu.Unlock()
				return err
			})
		}()
	}
	wg.Wait()
	if most != 1 {
		t.Errorf("%d requests ran at once", most)
	}
	release := make(chan struct{})
	go sess.Do(ctx, func(*Service) error { <-release; return nil })
	time.Sleep(20 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := sess.Do(short, func(*Service) error { return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a request waiting past its context: %v", err)
	}
	close(release)

	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Do(ctx, func(*Service) error { return nil }); !errors.Is(err, ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

// Other projects that a Session read (a search across projects, a
// session start's "From other projects") are brought up to their refs
// before each request, as its own repository is: what another process
// saved there since shows at the next request.
func TestSessionFollowsOtherProjects(t *testing.T) {
	ctx := context.Background()
	opts := Options{Warn: io.Discard, Projects: filepath.Join(t.TempDir(), "projects")}
	here, there := testrepo.NewRepo(t), testrepo.NewRepo(t)
	for _, dir := range []string{here, there} {
		svc, err := Open(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Sharing().Register(); err != nil {
			t.Fatal(err)
		}
		svc.Close()
	}
	other, err := Open(there, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sess, err := OpenSession(here, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	found := func(query string) bool {
		t.Helper()
		var hits []ProjectHit
		if err := sess.Do(ctx, func(s *Service) error {
			var err error
			hits, _, err = s.Recall().Search(ctx, SearchRequest{Query: query, Mode: "bm25", Scope: ScopeAll})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ProjectPath != "" && !h.Here {
				return true
			}
		}
		return false
	}
	if _, err := other.Memory().Save(ctx, SaveRequest{Content: "helm upgrades need the atomic flag", Type: "insight"}); err != nil {
		t.Fatal(err)
	}
	if !found("helm atomic") {
		t.Fatal("the first search across projects misses the other project's entry")
	}
	// another process rebuilds that project's cache, then saves
	if _, err := other.Recall().Reindex(ctx, ReindexProgress{}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.Memory().Save(ctx, SaveRequest{Content: "grafana dashboards live in ops/dashboards", Type: "insight"}); err != nil {
		t.Fatal(err)
	}
	if !found("grafana dashboards") {
		t.Error("a Session does not see what was saved in another project after its first request")
	}

	// the session start's "From other projects", which a Session keeps
	// per project until that project's memory changes, is a fresh one's
	inSession := func() (text string) {
		sess.Do(ctx, func(s *Service) error { text = sessionStart(t, s); return nil })
		return text
	}
	fresh := func() string {
		svc, err := Open(here, opts)
		if err != nil {
			t.Fatal(err)
		}
		defer svc.Close()
		return sessionStart(t, svc)
	}
	for _, save := range []struct {
		dir, content string
		tier         memory.Tier
	}{
		{here, "we deploy the api with helm charts to kubernetes", ""},
		{there, "helm releases are rolled back with helm rollback on a failed kubernetes deploy", memory.TierLongterm},
	} {
		svc, err := Open(save.dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		_, err = svc.Memory().Save(ctx, SaveRequest{Content: save.content, Type: "insight", Tier: save.tier})
		svc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got, want := inSession(), fresh(); got != want {
			t.Errorf("session start in a Session:\n%s\nin a fresh Service:\n%s", got, want)
		}
	}
	if got := inSession(); !strings.Contains(got, "From other projects") || !strings.Contains(got, "helm rollback") {
		t.Errorf("the other project's new insight is not in the session start:\n%s", got)
	}
}

// sessionStart is svc's session start, without an agent session.
func sessionStart(t *testing.T, svc *Service) string {
	t.Helper()
	text, err := svc.Agent().StartSession(context.Background(), "", 0)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
