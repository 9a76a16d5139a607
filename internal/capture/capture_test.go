package capture

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newBuffers(t *testing.T, on *bool) *Buffers {
	t.Helper()
	root := t.TempDir()
	wt := filepath.Join(root, "work")
	if err := os.Mkdir(filepath.Join(root, "git"), 0o700); err != nil {
		t.Fatal(err)
	}
	return New(Options{
		GitDir:   filepath.Join(root, "git"),
		WorkTree: wt,
		On:       func(context.Context) bool { return *on },
		Now:      time.Now,
		Warn:     func(f string, a ...any) { t.Errorf("warned: "+f, a...) },
	})
}

// A session's prompts come back newest first, without the one being
// answered; a torn line is skipped; taking the buffer empties it.
func TestPromptsAndTake(t *testing.T) {
	ctx, on := context.Background(), true
	b := newBuffers(t, &on)
	for _, p := range []string{"first question", "second question", "third question"} {
		if err := b.Prompt(ctx, "s1", p); err != nil {
			t.Fatal(err)
		}
	}
	path, _ := b.Path("s1")
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"prompt":"torn` + "\n") // a line that does not parse
	f.Close()
	if got := b.Prompts("s1", "third question", 2); strings.Join(got, "|") != "second question|first question" {
		t.Fatalf("prompts: %q", got)
	}
	if err := b.Tool(ctx, "s1", ToolUse{Tool: "Edit", Files: []string{"a.go", "../elsewhere/b.go"}}); err != nil {
		t.Fatal(err)
	}
	sum, changed, err := b.Take(ctx, "s1", "done")
	if err != nil || !changed || !strings.Contains(sum, "Exchange: first question · second question · third question") ||
		!strings.Contains(sum, "Files: a.go, 1 outside the repository (not recorded)") || !strings.Contains(sum, "Outcome: done") {
		t.Fatalf("summary %q, changed %v, %v", sum, changed, err)
	}
	if sum, _, err := b.Take(ctx, "s1", ""); sum != "" || err != nil {
		t.Fatalf("a second take: %q, %v", sum, err)
	}
}

// With capture off nothing is written, and a buffer left from before is
// taken without a summary.
func TestOff(t *testing.T) {
	ctx, on := context.Background(), true
	b := newBuffers(t, &on)
	b.Prompt(ctx, "s1", "recorded while on")
	on = false
	b.Prompt(ctx, "s2", "not recorded")
	if p, _ := b.Path("s2"); fileExists(p) {
		t.Fatal("a buffer written with capture off")
	}
	if sum, _, err := b.Take(ctx, "s1", ""); sum != "" || err != nil {
		t.Fatalf("taken with capture off: %q, %v", sum, err)
	}
	if p, _ := b.Path("s1"); fileExists(p) {
		t.Fatal("the buffer was kept")
	}
}

// The recorded session is the one buffers without an id go to; ids that
// are not names are not recorded.
func TestSession(t *testing.T) {
	on := true
	b := newBuffers(t, &on)
	if _, ok := b.Path(""); ok || b.Session() != "" {
		t.Fatal("a session before any was recorded")
	}
	b.RecordSession("abc-123")
	b.RecordSession("bad id\nwith lines")
	if b.Session() != "abc-123" {
		t.Fatalf("session %q", b.Session())
	}
	own, _ := b.Path("abc-123")
	if got, ok := b.Path(""); !ok || got != own {
		t.Fatalf("the recorded session's buffer: %q %v", got, ok)
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }
