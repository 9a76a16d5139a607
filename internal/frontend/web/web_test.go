package web

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/testrepo"
	"github.com/git-synaptic/git-synaptic/memory"
)

func TestMain(m *testing.M) { testrepo.Main(m) }

const token = "0123456789abcdef0123456789abcdef"

// served starts a server over a new repository and returns it with a
// client that holds the token's cookie (and no redirects followed unless
// asked), and the repository.
type served struct {
	t    *testing.T
	url  string
	svc  *app.Service
	dir  string
	c    *http.Client
	anon *http.Client
}

func serve(t *testing.T) *served {
	t.Helper()
	dir := testrepo.NewRepo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	// another process's view, for changes beside the server
	svc, err := app.Open(dir, app.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	ts := httptest.NewUnstartedServer(nil)
	srv, err := New(sess, token, ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ts.Config.Handler = srv
	ts.Start()
	t.Cleanup(ts.Close)
	jar, _ := cookiejar.New(nil)
	s := &served{t: t, url: ts.URL, svc: svc, dir: dir, c: &http.Client{Jar: jar}, anon: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if code, _ := s.get("/?token=" + token); code != 200 {
		t.Fatalf("login with the token: %d", code)
	}
	return s
}

func (s *served) get(path string) (int, string) {
	s.t.Helper()
	resp, err := s.c.Get(s.url + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func (s *served) post(path string, form url.Values, origin string) int {
	s.t.Helper()
	req, _ := http.NewRequest("POST", s.url+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if origin != "" {
		req.Header.Set("Origin", origin)
	}
	c := *s.c
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func (s *served) save(content string, typ memory.Type, tags ...string) string {
	s.t.Helper()
	e, err := s.svc.Memory().Save(context.Background(), app.SaveRequest{Content: content, Type: typ, Tags: tags})
	if err != nil {
		s.t.Fatal(err)
	}
	return e.ID
}

func TestTokenIsRequiredAndKeptInACookie(t *testing.T) {
	s := serve(t)
	for _, path := range []string{"/", "/search?q=x", "/status", "/static/style.css", "/?token=wrong-token-of-some-length"} {
		resp, err := s.anon.Get(s.url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without the token: %d", path, resp.StatusCode)
		}
	}
	resp, err := s.anon.Get(s.url + "/status?token=" + token)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/status" {
		t.Errorf("the token URL: %d to %q, want a redirect that drops the token", resp.StatusCode, resp.Header.Get("Location"))
	}
	ck := resp.Cookies()
	if len(ck) != 1 || !ck[0].HttpOnly || ck[0].SameSite != http.SameSiteStrictMode {
		t.Errorf("cookie %+v, want one HttpOnly SameSite=Strict", ck)
	}
	// Another Host (DNS rebinding) is refused even with the cookie.
	req, _ := http.NewRequest("GET", s.url+"/", nil)
	req.Host = "attacker.example:80"
	resp, err = s.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("a foreign Host: %d", resp.StatusCode)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
		t.Errorf("CSP %q", csp)
	}
}

func TestHostileContentIsEscaped(t *testing.T) {
	s := serve(t)
	id := s.save("<script>alert('x')</script> and <img src=x onerror=alert(1)> and [click](javascript:alert(1)) and [ok](https://example.com/a?b=\"c\")\n\n```\n<b>code</b>\n```", memory.TypeInsight, "xss")
	for _, path := range []string{"/", "/entry/" + id, "/search?q=script+alert&explain=1", "/?tag=xss"} {
		code, body := s.get(path)
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		for _, bad := range []string{"<script>alert", "<img", "href=\"javascript:", "<b>code"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s renders %q unescaped", path, bad)
			}
		}
	}
	_, body := s.get("/entry/" + id)
	if !strings.Contains(body, `<a href="https://example.com/a?b=&#34;c&#34;" rel="noopener noreferrer nofollow">ok</a>`) {
		t.Errorf("a safe link is not rendered as one:\n%s", body)
	}
	if !strings.Contains(body, "&lt;b&gt;code&lt;/b&gt;") {
		t.Error("fenced code is not shown escaped")
	}
}

func TestTimelineFiltersAndPages(t *testing.T) {
	s := serve(t)
	for i := range 7 {
		s.save("decision number "+string(rune('a'+i)), memory.TypeDecision, "db")
	}
	issue := s.save("the flaky test again", memory.TypeIssue)
	archived := s.save("an old insight", memory.TypeInsight)
	if _, err := s.svc.Memory().SetArchived(context.Background(), archived, true); err != nil {
		t.Fatal(err)
	}
	ids := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`class="id" href="/entry/([0-9a-f]{32})"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	_, body := s.get("/?type=issue")
	if got := ids(body); len(got) != 1 || got[0] != issue {
		t.Errorf("type=issue: %v", got)
	}
	_, body = s.get("/?tag=db")
	if got := ids(body); len(got) != 7 {
		t.Errorf("tag=db: %d entries", len(got))
	}
	_, body = s.get("/?archived=only")
	if got := ids(body); len(got) != 1 || got[0] != archived {
		t.Errorf("archived=only: %v", got)
	}
	// Pages of 3 walk all 8 unarchived entries once each, newest first.
	seen := map[string]bool{}
	next := "/?n=3"
	for pages := 0; next != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		_, body = s.get(next)
		for _, id := range ids(body) {
			if seen[id] {
				t.Errorf("%s on two pages", id)
			}
			seen[id] = true
		}
		next = ""
		if m := regexp.MustCompile(`id="next" href="([^"]+)"`).FindStringSubmatch(body); m != nil {
			next = strings.ReplaceAll(m[1], "&amp;", "&")
		}
	}
	if len(seen) != 8 || seen[archived] {
		t.Errorf("paging saw %d entries (archived: %v)", len(seen), seen[archived])
	}
	for _, bad := range []string{"/?type=nonsense", "/?since=whenever", "/?before=yesterday-ish"} {
		if code, body := s.get(bad); code != http.StatusBadRequest || !strings.Contains(body, "Something went wrong") {
			t.Errorf("%s: %d", bad, code)
		}
	}
	if code, _ := s.get("/entry/ffffffff"); code != http.StatusNotFound {
		t.Errorf("an unknown entry: %d", code)
	}
}

func TestEntryPageShowsHistoryAsADiff(t *testing.T) {
	s := serve(t)
	id := s.save("first line\nsecond line", memory.TypeDecision)
	text := "first line\nsecond line, amended"
	if _, err := s.svc.Memory().Edit(context.Background(), id, app.EditRequest{Content: &text}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.svc.Memory().SetPinned(context.Background(), id, true); err != nil {
		t.Fatal(err)
	}
	_, body := s.get("/entry/" + id[:8])
	for _, want := range []string{`<span class="dsame">  first line</span>`, `<span class="ddel">- second line</span>`, `<span class="dadd">&#43; second line, amended</span>`, "<strong>pin</strong>", "<strong>edit</strong>"} {
		if !strings.Contains(body, want) {
			t.Errorf("entry page lacks %q", want)
		}
	}
}

// The writes need the form token and this origin; with both, accepting a
// pending correction moves the shared ref.
func TestRuleAcceptNeedsTheFormTokenAndMovesTheRef(t *testing.T) {
	s := serve(t)
	corr := s.save("always run the linter before pushing", memory.TypeInsight, app.TagCorrection)
	_, body := s.get("/rules")
	m := regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`).FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, "always run the linter") {
		t.Fatalf("rules page lacks the pending correction or its form:\n%s", body)
	}
	before := testrepo.Git(t, s.dir, "rev-parse", app.SharedRef)
	form := url.Values{"id": {corr}}
	if code := s.post("/rules/accept", form, ""); code != http.StatusForbidden {
		t.Errorf("accept without the form token: %d", code)
	}
	form.Set("csrf", m[1])
	if code := s.post("/rules/accept", form, "http://evil.example"); code != http.StatusForbidden {
		t.Errorf("accept from another origin: %d", code)
	}
	if code := s.post("/rules/accept", url.Values{"id": {corr}, "csrf": {strings.Repeat("0", len(m[1]))}}, ""); code != http.StatusForbidden {
		t.Errorf("accept with a wrong form token: %d", code)
	}
	if got := testrepo.Git(t, s.dir, "rev-parse", app.SharedRef); got != before {
		t.Fatal("a refused request moved the ref")
	}
	if code := s.post("/rules/accept", form, strings.TrimSuffix(s.url, "/")); code != http.StatusSeeOther {
		t.Fatalf("accept: %d", code)
	}
	if got := testrepo.Git(t, s.dir, "rev-parse", app.SharedRef); got == before {
		t.Error("accepting did not write to the shared ref")
	}
	if _, body := s.get("/rules"); !strings.Contains(body, "Nothing waiting") {
		t.Error("the accepted correction is still pending")
	}
	if code := s.post("/rules/dismiss", url.Values{"id": {"ffffffff"}, "csrf": {m[1]}}, ""); code != http.StatusNotFound {
		t.Errorf("dismiss of an unknown id: %d", code)
	}
	// GET never writes.
	resp, err := s.c.Get(s.url + "/rules/accept?id=" + corr)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET on a write: %d", resp.StatusCode)
	}
}

func TestStatusAndCodePages(t *testing.T) {
	s := serve(t)
	s.save("we deploy with helm", memory.TypeDecision)
	for _, path := range []string{"/status", "/code", "/code?file=main.go", "/search", "/search?q=helm&mode=bm25"} {
		if code, body := s.get(path); code != 200 {
			t.Errorf("%s: %d\n%s", path, code, body)
		}
	}
	_, body := s.get("/status")
	if !strings.Contains(body, `id="by-type"`) || !strings.Contains(body, "decision") {
		t.Error("status lacks the counts by type")
	}
	// the code page lists the memory that names the file, not the
	// memory that shares a word with it
	s.save("main.go parses the flags before it opens the repository", memory.TypeDecision)
	s.save("the main idea of the release is a smaller binary", memory.TypeDecision)
	_, body = s.get("/code?file=cmd/main.go")
	if !strings.Contains(body, "parses the flags") || strings.Contains(body, "main idea") {
		t.Errorf("the code page's memory:\n%s", body)
	}
}

func TestServeStopsWithItsContext(t *testing.T) {
	dir := testrepo.NewRepo(t)
	sess, err := app.OpenSession(dir, app.Options{Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	ts := httptest.NewUnstartedServer(nil)
	ln := ts.Listener
	srv, err := New(sess, token, ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, srv) }()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}

// The form's back field only redirects within this server: browsers read
// /\evil.com as //evil.com.
func TestBackRedirectsOnlyWithinTheServer(t *testing.T) {
	for back, ok := range map[string]bool{
		"/rules":               true,
		"/search?q=cache":      true,
		"/\\evil.com":          false,
		"//evil.com":           false,
		"/\\/evil.com":         false,
		"https://evil.com/":    false,
		"/\t/evil.com":         false,
		"evil.com":             false,
		"/entry/3f2a?x=1#frag": true,
	} {
		if got := samePath(back); got != ok {
			t.Errorf("samePath(%q) = %v, want %v", back, got, ok)
		}
	}
}
