package app

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/notes"

	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// Automatic capture keeps a short private record of each agent exchange:
// the prompt, what came of it, the tools used and the repository files
// they touched. The agent's hooks report the prompt and each tool call as
// they happen; they go to a small buffer in the worktree's git dir, and the
// stop hook folds the buffer into one ephemeral entry, which decays by the
// usual rules. Captures are private memory (PrivateRef, never
// pushed): they record one person's session, not the team's knowledge.
// Before anything is written, even to the buffer, credentials are
// redacted and paths outside the repository are dropped.

// CaptureKey is the git config switch for automatic capture (default on).
const CaptureKey = "synaptic.capture"

// CaptureTag tags captured exchanges; ChangesTag marks those whose tools
// changed something (files written or edited, commands run).
const (
	CaptureTag = "auto-capture"
	ChangesTag = "changes"
)

// changingTools are the agent tools that change the project: an exchange
// that used one matters more (the three-tier seed's importance 0.8).
var changingTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true}

// Capture limits: what one buffer line and one entry may hold.
const (
	maxCaptureText  = 1000                // a prompt or an outcome, in the buffer
	maxCaptureWhat  = 160                 // a command's description
	maxCaptureBytes = 1 << 20             // the buffer; later tool calls are dropped
	maxCaptureFile  = 2 * maxCaptureBytes // what is read back (the last line may pass the limit)
	maxCaptureFiles = 20                  // files named in an entry
	staleCapture    = 7 * 24 * time.Hour
)

// ToolUse is one tool call an agent made, as its hook reports it.
type ToolUse struct {
	Tool  string   // the agent's tool name: Edit, Bash, Read...
	Files []string // paths it named, absolute or relative to the worktree
	What  string   // what it did, in a few words (a command's description)
}

// captureLine is one line of a capture buffer.
type captureLine struct {
	Prompt  string   `json:"prompt,omitempty"`
	Tool    string   `json:"tool,omitempty"`
	Files   []string `json:"files,omitempty"`
	What    string   `json:"what,omitempty"`
	Outside int      `json:"outside,omitempty"` // files outside the repository, not named
}

// CapturePrompt records the agent's prompt as the start of an exchange.
func (s *Agent) CapturePrompt(ctx context.Context, sessionID, prompt string) error {
	if strings.TrimSpace(prompt) == "" {
		return nil
	}
	return s.appendCapture(ctx, sessionID, captureLine{Prompt: s.capturedPrompt(prompt)})
}

// capturedPrompt is a prompt as a capture buffer holds it: trimmed,
// clipped and scrubbed.
func (s *core) capturedPrompt(prompt string) string {
	return s.scrub(clipText(strings.TrimSpace(prompt), maxCaptureText))
}

// CaptureTool records one tool call of the current exchange.
func (s *Agent) CaptureTool(ctx context.Context, sessionID string, t ToolUse) error {
	if t.Tool == "" {
		return nil
	}
	line := captureLine{Tool: clipText(t.Tool, 64), What: s.scrub(FirstLine(t.What, maxCaptureWhat))}
	for _, f := range t.Files {
		if rel, ok := s.inWorkTree(f); ok {
			line.Files = append(line.Files, rel)
		} else if f != "" {
			line.Outside++
		}
	}
	return s.appendCapture(ctx, sessionID, line)
}

// CaptureExchange folds the exchange recorded since the last one into a
// private, ephemeral progress entry, with outcome (the agent's last
// message, may be "") as what came of it. It reports the entry and
// whether it saved one: nothing is saved when capture is off or nothing
// was recorded.
func (s *Agent) CaptureExchange(ctx context.Context, sessionID, outcome string) (notes.Entry, bool, error) {
	path, ok := s.captureFile(sessionID)
	if !ok {
		return notes.Entry{}, false, nil
	}
	// Each fold takes the buffer under its own name, so two stop hooks at
	// once never touch the same file; one left by a killed hook (it may
	// have been saved) is never read again and pruned with stale buffers.
	folding := fmt.Sprintf("%s.fold-%d", path, os.Getpid())
	if err := os.Rename(path, folding); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return notes.Entry{}, false, nil
		}
		return notes.Entry{}, false, fmt.Errorf("capture: %w", err)
	}
	defer os.Remove(folding)
	if !s.captureOn(ctx) {
		return notes.Entry{}, false, nil
	}
	lines, err := readCapture(folding)
	if err != nil {
		return notes.Entry{}, false, err
	}
	content, changed := exchangeSummary(lines, s.scrub(clipText(strings.TrimSpace(outcome), maxCaptureText)))
	if content == "" {
		return notes.Entry{}, false, nil
	}
	tags := []string{CaptureTag}
	if changed {
		tags = append(tags, ChangesTag)
	}
	// progress is ephemeral by type; an explicit tier would never decay
	e, err := s.memory().Save(ctx, SaveRequest{Content: content, Type: notes.TypeProgress, Private: true, Tags: tags, SessionID: sessionID})
	if err != nil {
		return e, false, fmt.Errorf("capture: %w", err)
	}
	return e, true, nil
}

// exchangeSummary is a captured exchange's entry text, and whether its
// tools changed something; "" when nothing was recorded.
func exchangeSummary(lines []captureLine, outcome string) (string, bool) {
	var prompts, whats, files []string
	tools := map[string]int{}
	seenFile, seenWhat := map[string]bool{}, map[string]bool{}
	outside := 0
	changed := false
	for _, l := range lines {
		if l.Prompt != "" {
			prompts = append(prompts, Digest(l.Prompt))
		}
		if l.Tool == "" {
			continue
		}
		tools[l.Tool]++
		changed = changed || changingTools[l.Tool]
		if l.What != "" && !seenWhat[l.What] && len(whats) < 5 {
			seenWhat[l.What] = true
			whats = append(whats, l.What)
		}
		for _, f := range l.Files {
			if !seenFile[f] {
				seenFile[f] = true
				files = append(files, f)
			}
		}
		outside += l.Outside
	}
	if len(prompts) == 0 && len(tools) == 0 {
		return "", false
	}
	var b strings.Builder
	if len(prompts) > 0 {
		fmt.Fprintf(&b, "Exchange: %s\n", clipText(strings.Join(prompts, " · "), maxItemChars/2))
	} else {
		b.WriteString("Exchange: (prompt not recorded)\n")
	}
	if outcome != "" {
		fmt.Fprintf(&b, "Outcome: %s\n", clipText(strings.Join(strings.Fields(outcome), " "), 400))
	}
	if len(tools) > 0 {
		names := make([]string, 0, len(tools))
		for t := range tools {
			names = append(names, t)
		}
		sort.Slice(names, func(i, j int) bool {
			if tools[names[i]] != tools[names[j]] {
				return tools[names[i]] > tools[names[j]]
			}
			return names[i] < names[j]
		})
		for i, t := range names {
			names[i] = fmt.Sprintf("%s %d", t, tools[t])
		}
		fmt.Fprintf(&b, "Tools: %s\n", strings.Join(names, ", "))
	}
	if len(whats) > 0 {
		fmt.Fprintf(&b, "Ran: %s\n", strings.Join(whats, "; "))
	}
	if len(files) > 0 || outside > 0 {
		shown := files[:min(len(files), maxCaptureFiles)]
		line := strings.Join(shown, ", ")
		if more := len(files) - len(shown); more > 0 {
			line += fmt.Sprintf(" and %d more", more)
		}
		if outside > 0 {
			line = strings.TrimPrefix(line+fmt.Sprintf(", %d outside the repository (not recorded)", outside), ", ")
		}
		fmt.Fprintf(&b, "Files: %s\n", line)
	}
	return strings.TrimSpace(b.String()), changed
}

// appendCapture adds a line to the session's buffer, when capture is on.
// A line is written with one append, so concurrent tool hooks do not
// interleave.
func (s *core) appendCapture(ctx context.Context, sessionID string, line captureLine) error {
	path, ok := s.captureFile(sessionID)
	if !ok || !s.captureOn(ctx) {
		return nil
	}
	b, err := json.Marshal(line)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxCaptureBytes {
		return nil // a runaway exchange: its start is kept
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// captureOn reports whether automatic capture is on (git config
// synaptic.capture, default true).
func (s *core) captureOn(ctx context.Context) bool {
	on, set, err := s.repo.ConfigBool(ctx, CaptureKey)
	return err == nil && (on || !set)
}

// captureDir holds the capture buffers of this worktree's agent sessions.
func (s *core) captureDir() string { return filepath.Join(s.repo.GitDir(), "synaptic-capture") }

// captureFile is the buffer of a session (the agent's recorded session
// when sessionID is ""); false when there is no session to capture for.
func (s *core) captureFile(sessionID string) (string, bool) {
	if sessionID == "" {
		sessionID = s.readAgentSession()
	}
	if sessionID == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(sessionID))
	return filepath.Join(s.captureDir(), hex.EncodeToString(h[:8])+".jsonl"), true
}

// pruneCaptures removes buffers of sessions that stopped without a stop
// hook, and folds of killed stop hooks, once they are a week old.
func (s *core) pruneCaptures() {
	ents, _ := os.ReadDir(s.captureDir())
	for _, d := range ents {
		if fi, err := d.Info(); err == nil && s.now().Sub(fi.ModTime()) > staleCapture {
			os.Remove(filepath.Join(s.captureDir(), d.Name()))
		}
	}
}

// readCapture reads a buffer; lines that do not parse (a torn write) are
// skipped.
func readCapture(path string) ([]captureLine, error) {
	b, err := regular.ReadFile(path, maxCaptureFile)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	var out []captureLine
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, maxCaptureBytes)
	for sc.Scan() {
		var l captureLine
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out, nil
}

// pathRE finds what looks like a file path in text: absolute, from the
// home directory, or climbing out with "../".
var pathRE = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(^|[\\s\"'=(`])((?:~|\\.\\.)?/[^\\s\"'`<>|;,()\\[\\]{}]+)")
})

// scrub makes text fit to capture: credentials are redacted, paths inside
// the worktree are made relative and paths outside it are replaced.
func (s *core) scrub(text string) string {
	text, _ = secrets.Redact(text)
	return pathRE().ReplaceAllStringFunc(text, func(m string) string {
		sub := pathRE().FindStringSubmatch(m)
		if rel, ok := s.inWorkTree(sub[2]); ok {
			return sub[1] + rel
		}
		return sub[1] + "[path outside the repository]"
	})
}

// inWorkTree is path relative to the worktree, if it lies inside it.
// Relative paths are taken from the worktree; "~/" is the home directory.
func (s *core) inWorkTree(path string) (string, bool) {
	root := s.repo.WorkTree()
	if root == "" || path == "" {
		return "", false
	}
	if rest, ok := strings.CutPrefix(path, "~/"); ok {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", false
		}
		path = filepath.Join(home, rest)
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// clipText cuts text to at most n bytes at a word boundary, marking the cut.
func clipText(text string, n int) string {
	if len(text) <= n {
		return text
	}
	return strings.TrimSpace(text[:wordCut(text, n-len("…"))]) + "…"
}
