//go:build linux

package main_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/git-synaptic/git-synaptic/internal/testrepo"
)

// browserPath is Debian's headless Chromium (make test installs
// chromium-headless-shell; CI fails on the skip when none is found). A
// full chromium already installed serves as well. Debian's
// /usr/bin/chromium-headless-shell is a shell script that runs the
// browser as its child: the browser itself is taken where it is there,
// so that ending the test ends it (browserGroup covers other wrappers).
func browserPath(t *testing.T) string {
	for _, p := range []string{"/usr/lib/chromium/chromium-headless-shell", "/usr/lib/chromium/chromium"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	for _, name := range []string{"chromium-headless-shell", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium: 'make browser' (run by make test) installs Debian's chromium-headless-shell")
	return ""
}

// browserGroup starts the browser in a process group of its own, ended
// whole when the test ends it: a wrapper script's child would otherwise
// outlive the test (every make test left a headless Chromium running).
func browserGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// startWeb runs git synaptic web in dir and returns the URL it printed.
func startWeb(t *testing.T, dir string) string {
	t.Helper()
	cmd := exec.Command(bin, "web", "--port", "0")
	cmd.Dir = dir
	cmd.Env = os.Environ()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("git synaptic web did not stop cleanly on an interrupt: %v", err)
			}
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
			t.Error("git synaptic web did not stop within 10 s of an interrupt")
		}
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("git synaptic web printed nothing: %v", err)
	}
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/\?token=[0-9a-f]+`).FindString(line)
	if url == "" {
		t.Fatalf("no URL in %q", line)
	}
	return url
}

// A repository with 1,000 entries, reviewed in a real browser: the
// timeline loads, a search finds an entry, its page opens from the
// result, and accepting a pending rule on the rules page moves the shared
// ref. With SCREENSHOTS=DIR the pages are saved there (the README's).
func TestWebInABrowser(t *testing.T) {
	chrome := browserPath(t)
	dir := testrepo.NewRepo(t)
	ok(t, dir, "init")
	var lines strings.Builder
	topics := []string{"billing", "deploy", "search", "auth", "cache", "ci", "docs", "release"}
	types := []string{"decision", "insight", "issue", "progress", "reference"}
	start := time.Now().Add(-1000 * time.Hour)
	for i := range 1000 {
		topic := topics[i%len(topics)]
		l, _ := json.Marshal(map[string]any{
			"content": fmt.Sprintf("%s note %d: the %s service keeps its state in table %s_%d", topic, i, topic, topic, i),
			"type":    types[i%len(types)], "tags": []string{topic}, "created": start.Add(time.Duration(i) * time.Hour),
		})
		lines.Write(append(l, '\n'))
	}
	if r := runWith(t, dir, lines.String(), nil, "import", "-"); r.code != 0 {
		t.Fatalf("import: %s", r.err)
	}
	target := save(t, dir, "## Deploys\n\nWe deploy the **api** with `helm upgrade --atomic`: a failed deploy otherwise leaves the release stuck.\n\n- roll back with `helm rollback`\n- see [the runbook](https://example.com/runbook)", "--type", "decision", "--tag", "deploy")
	// edited once: the page says so as show does
	ok(t, dir, "edit", target, "-m", "## Deploys\n\nWe deploy the **api** with `helm upgrade --atomic`: a failed deploy otherwise leaves the release stuck.\n\n- roll back with `helm rollback`\n- see [the runbook](https://example.com/runbook)\n- wait for the pods")
	if show := ok(t, dir, "show", target); !strings.Contains(show, "Edited: 1 time(s)") {
		t.Fatalf("show after one edit:\n%s", show)
	}
	correction := save(t, dir, "always run go vet before pushing, never skip it", "--type", "insight", "--tag", "correction")
	url := startWeb(t, dir)
	shots := os.Getenv("SCREENSHOTS")

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chrome), chromedp.NoSandbox, chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.ModifyCmdFunc(browserGroup))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 45*time.Second)
	defer cancel()
	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			if shots == "" {
				return nil
			}
			var png []byte
			if err := chromedp.CaptureScreenshot(&png).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		})
	}

	// The timeline: the token URL logs in, the first page of 50 shows.
	var rows int
	var first string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible("#timeline", chromedp.ByID),
		chromedp.Evaluate(`document.querySelectorAll("#timeline > li.entry").length`, &rows),
		chromedp.Text("#timeline > li.entry .text", &first, chromedp.NodeVisible),
		shot("timeline"),
	); err != nil {
		t.Fatalf("timeline: %v", err)
	}
	if rows != 50 || !strings.Contains(first, "always run go vet") {
		t.Errorf("timeline shows %d rows, first %q", rows, first)
	}
	var location string
	if err := chromedp.Run(ctx, chromedp.Location(&location)); err != nil || strings.Contains(location, "token") {
		t.Errorf("the token stays in the address bar: %q %v", location, err)
	}

	// Search, then open the entry from its result.
	var results, id, content, facts, history string
	if err := chromedp.Run(ctx,
		chromedp.Click(`a[href="/search"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#search-form input[name="q"]`, chromedp.ByQuery),
		chromedp.SendKeys(`#search-form input[name="q"]`, "helm rollback", chromedp.ByQuery),
		chromedp.Click(`#search-form input[name="explain"]`, chromedp.ByQuery),
		chromedp.Submit(`#search-form`, chromedp.ByQuery),
		chromedp.WaitVisible("#results", chromedp.ByID),
		chromedp.Text("#results", &results, chromedp.ByID),
		shot("search"),
		chromedp.Click(`#results li.entry a.text`, chromedp.ByQuery),
		chromedp.WaitVisible("#entry-id", chromedp.ByID),
		chromedp.Text("#entry-id", &id, chromedp.ByID),
		chromedp.InnerHTML(".content", &content, chromedp.ByQuery),
		chromedp.Text(".facts", &facts, chromedp.ByQuery),
		chromedp.Text(".history", &history, chromedp.ByQuery),
		shot("entry"),
	); err != nil {
		t.Fatalf("search and entry: %v", err)
	}
	if !strings.Contains(results, "helm upgrade") || !strings.Contains(results, "score") {
		t.Errorf("search results (with explain): %q", results)
	}
	if id != target || !strings.Contains(content, "<strong>api</strong>") || !strings.Contains(content, "<code>helm rollback</code>") {
		t.Errorf("entry page: id %q, content %q", id, content)
	}
	// what a reader sees: the edit count as show gives it, no Go values
	if !regexp.MustCompile(`Edited\s+1 time\(s\), last `).MatchString(facts) || strings.ContainsAny(facts, "{}&") || !strings.Contains(history, "edit by") {
		t.Errorf("entry page facts read:\n%s\nhistory:\n%s", facts, history)
	}

	// Accept the pending correction: the shared ref moves.
	before := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory")
	var done, pending string
	steps := []struct {
		name string
		act  chromedp.Action
	}{
		{"open the rules page", chromedp.Click(`a[href="/rules"]`, chromedp.ByQuery)},
		{"wait for the pending list", chromedp.WaitVisible("#pending", chromedp.ByID)},
		{"read it", chromedp.OuterHTML("#pending", &pending, chromedp.ByID)},
		{"screenshot", shot("rules")},
		{"type a label", chromedp.SendKeys(`#pending input[name="label"]`, "go vet", chromedp.ByQuery)},
		{"accept", chromedp.Click(fmt.Sprintf(`button.accept[data-id="%s"]`, correction), chromedp.ByQuery)},
		{"wait for the answer", chromedp.WaitVisible(".done", chromedp.ByQuery)},
		{"read it", chromedp.Text(".done", &done, chromedp.ByQuery)},
	}
	for _, st := range steps {
		if err := chromedp.Run(ctx, st.act); err != nil {
			t.Fatalf("rules page, %s: %v\n%s", st.name, err, pending)
		}
	}
	if !strings.Contains(done, "accepted as rule") {
		t.Errorf("after accept the page says %q", done)
	}
	if after := testrepo.Git(t, dir, "rev-parse", "refs/synaptic/memory"); after == before {
		t.Error("accepting the rule did not move refs/synaptic/memory")
	}
	if out := ok(t, dir, "rules", "list"); !strings.Contains(out, "go vet") {
		t.Errorf("rules list after accept:\n%s", out)
	}
}
