package app

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/git-synaptic/git-synaptic/memory"
)

// An exchange is captured as one private, ephemeral entry: the prompt, the
// outcome, the tools and the repository files, with credentials redacted
// and paths outside the repository left out, even from the buffer.
func TestCaptureExchange(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	a, root := s.Agent(), s.repo.WorkTree()
	const key = "ghp_4fT9kL2mQ8xR7vB1nC3dE5gH6jK0pW2sY9zA"
	steps := []error{
		a.CapturePrompt(ctx, "s1", "Make the retry loop in billing back off; my token is "+key+" and notes are in /home/ann/private/plan.md"),
		a.CaptureTool(ctx, "s1", ToolUse{Tool: "Read", Files: []string{"/etc/passwd"}}),
		a.CaptureTool(ctx, "s1", ToolUse{Tool: "Edit", Files: []string{filepath.Join(root, "billing", "retry.go")}}),
		a.CaptureTool(ctx, "s1", ToolUse{Tool: "Edit", Files: []string{"billing/retry_test.go"}}),
		a.CaptureTool(ctx, "s1", ToolUse{Tool: "Bash", What: "GH_TOKEN=" + key + " go test ./billing/... > ~/outside.log"}),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	buf, _ := s.capture.Path("s1")
	b, err := os.ReadFile(buf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), key) || strings.Contains(string(b), "/etc") || strings.Contains(string(b), "/home/ann") {
		t.Fatalf("the buffer holds a secret or an outside path:\n%s", b)
	}
	e, ok, err := a.CaptureExchange(ctx, "s1", "Done: retries now back off exponentially, see "+filepath.Join(root, "billing", "retry.go")+" and /tmp/scratch.txt.")
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	want := []string{
		"Exchange: Make the retry loop in billing back off; my token is [redacted GitHub token]",
		"[path outside the repository]",
		"Outcome: Done: retries now back off exponentially, see billing/retry.go and [path outside the repository]",
		"Tools: Edit 2, Bash 1, Read 1",
		"Ran: GH_TOKEN=[redacted GitHub token] go test ./billing/... > [path outside the repository]",
		"Files: billing/retry.go, billing/retry_test.go, 1 outside the repository (not recorded)",
	}
	for _, w := range want {
		if !strings.Contains(e.Content, w) {
			t.Errorf("capture lacks %q:\n%s", w, e.Content)
		}
	}
	for _, leak := range []string{key, "/etc", "/home/ann", "/tmp/scratch", root} {
		if strings.Contains(e.Content, leak) {
			t.Errorf("capture holds %q:\n%s", leak, e.Content)
		}
	}
	got, err := s.Recall().Show(ctx, e.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Private || got.Type != memory.TypeProgress || got.Tier != memory.TierEphemeral || got.TierExplicit || got.SessionID != "s1" ||
		!slices.Equal(got.Tags, []string{CaptureTag, ChangesTag}) {
		t.Errorf("capture stored as %+v", got)
	}
	if _, err := os.Stat(buf); !os.IsNotExist(err) {
		t.Errorf("buffer left after the fold: %v", err)
	}
	if _, ok, err := a.CaptureExchange(ctx, "s1", "again"); ok || err != nil {
		t.Errorf("a stop with nothing recorded saved a capture (%v)", err)
	}
	// A read-only exchange is captured without the changes tag.
	a.CaptureTool(ctx, "s1", ToolUse{Tool: "Grep", Files: []string{"."}})
	if e, ok, _ := a.CaptureExchange(ctx, "s1", ""); !ok || slices.Contains(e.Tags, ChangesTag) || !strings.Contains(e.Content, "(prompt not recorded)") {
		t.Errorf("read-only capture: %v %+v", ok, e)
	}
}

// git config synaptic.capture false turns capture off: nothing is
// buffered, and a buffer left from before is dropped, not saved.
func TestCaptureOff(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	a := s.Agent()
	a.CapturePrompt(ctx, "s1", "before the switch")
	if out, err := exec.Command("git", "-C", s.repo.WorkTree(), "config", CaptureKey, "false").CombinedOutput(); err != nil {
		t.Fatal(err, string(out))
	}
	a.CapturePrompt(ctx, "s1", "after the switch")
	a.CaptureTool(ctx, "s1", ToolUse{Tool: "Edit", Files: []string{"a.go"}})
	buf, _ := s.capture.Path("s1")
	if b, _ := os.ReadFile(buf); strings.Contains(string(b), "after") || strings.Contains(string(b), "a.go") {
		t.Errorf("captured while off:\n%s", b)
	}
	if _, ok, err := a.CaptureExchange(ctx, "s1", "done"); ok || err != nil {
		t.Errorf("saved a capture while off (%v)", err)
	}
	if _, err := os.Stat(buf); !os.IsNotExist(err) {
		t.Errorf("buffer kept while off: %v", err)
	}
	if all, _ := s.Recall().List(ctx, Filter{IncludeArchived: true}); len(all) != 0 {
		t.Errorf("entries: %+v", all)
	}
}

// The prompt hook shows captures of other sessions as recent memory, not
// the agent's own, which it has in its context; and a capture that
// changed something outranks one that did not.
func TestPromptShowsOtherSessionsCaptures(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, Options{})
	a := s.Agent()
	for _, sess := range []string{"yesterday", "now"} {
		a.CapturePrompt(ctx, sess, "fix the flaky billing test ("+sess+")")
		a.CaptureTool(ctx, sess, ToolUse{Tool: "Edit", Files: []string{"billing/retry_test.go"}})
		if _, ok, err := a.CaptureExchange(ctx, sess, ""); !ok || err != nil {
			t.Fatal(ok, err)
		}
	}
	md, err := a.PromptContext(ctx, "now", "go on", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(md, "(yesterday)") || strings.Contains(md, "(now)") {
		t.Errorf("prompt context:\n%s", md)
	}
}

// Buffers of sessions that never stopped are removed after a week.
func TestPruneCaptures(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := openTest(t, Options{Now: func() time.Time { return now }})
	s.Agent().CapturePrompt(ctx, "gone", "an exchange that never stopped")
	buf, _ := s.capture.Path("gone")
	now = now.Add(8 * 24 * time.Hour)
	if _, err := s.Agent().StartSession(ctx, "next", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(buf); !os.IsNotExist(err) {
		t.Errorf("stale buffer kept: %v", err)
	}
}

// Two stop hooks at once fold one exchange once; a fold a killed hook
// left is never saved again, and is pruned after a week.
func TestCaptureFoldsOnce(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s := openTest(t, Options{Now: func() time.Time { return now }})
	other, err := Open(s.Root(), Options{Warn: os.Stderr, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	buf, _ := s.capture.Path("s1")
	killed := buf + ".fold-1"
	os.MkdirAll(filepath.Dir(buf), 0o700)
	os.WriteFile(killed, []byte(`{"prompt":"an exchange a killed hook was folding"}`+"\n"), 0o600)
	s.Agent().CapturePrompt(ctx, "s1", "one exchange")
	saved := make(chan bool, 2)
	for _, svc := range []*Service{s, other} {
		go func() {
			_, ok, err := svc.Agent().CaptureExchange(ctx, "s1", "")
			saved <- ok && err == nil
		}()
	}
	if a, b := <-saved, <-saved; a == b {
		t.Errorf("saved by both or neither: %v %v", a, b)
	}
	caps, _ := s.Recall().List(ctx, Filter{Tags: []string{CaptureTag}})
	if len(caps) != 1 || strings.Contains(caps[0].Content, "killed") {
		t.Fatalf("captures: %+v", caps)
	}
	now = now.Add(8 * 24 * time.Hour)
	s.capture.Prune()
	if _, err := os.Stat(killed); !os.IsNotExist(err) {
		t.Errorf("a killed fold kept: %v", err)
	}
}
