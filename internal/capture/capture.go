// Package capture keeps a short private record of each agent exchange as
// it happens: the prompt, the tools used and the repository files they
// touched. The agent's hooks report the prompt and each tool call; they go
// to a small buffer per session in the worktree's git dir, which the stop
// hook takes and summarises in one text (the application saves it as
// private, ephemeral memory). Before anything is written, even to the
// buffer, credentials are redacted and paths outside the repository are
// dropped. It also keeps the agent's current session for the worktree,
// which the hooks record and a server the agent started follows.
package capture

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

	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/internal/excerpt"
	"github.com/git-synaptic/git-synaptic/internal/regular"
	"github.com/git-synaptic/git-synaptic/internal/secrets"
	"github.com/git-synaptic/git-synaptic/memory"
)

// changingTools are the agent tools that change the project: an exchange
// that used one matters more (the app tags it; the three-tier seed's
// importance 0.8).
var changingTools = map[string]bool{"Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true}

// Capture limits: what one buffer line and one summary may hold.
const (
	maxText   = 1000         // a prompt or an outcome, in the buffer
	maxWhat   = 160          // a command's description
	maxBytes  = 1 << 20      // the buffer; later tool calls are dropped
	maxFile   = 2 * maxBytes // what is read back (the last line may pass the limit)
	maxFiles  = 20           // files named in a summary
	maxPrompt = 250          // the prompts of an exchange, in its summary: half of what the prompt hook shows of one memory
	stale     = 7 * 24 * time.Hour
)

// ToolUse is one tool call an agent made, as its hook reports it.
type ToolUse struct {
	Tool  string   // the agent's tool name: Edit, Bash, Read...
	Files []string // paths it named, absolute or relative to the worktree
	What  string   // what it did, in a few words (a command's description)
}

// line is one line of a buffer.
type line struct {
	Prompt  string   `json:"prompt,omitempty"`
	Tool    string   `json:"tool,omitempty"`
	Files   []string `json:"files,omitempty"`
	What    string   `json:"what,omitempty"`
	Outside int      `json:"outside,omitempty"` // files outside the repository, not named
}

// Options give Buffers what they work with.
type Options struct {
	// GitDir is the worktree's own git dir, where buffers and the session
	// file live (two worktrees can host two agents).
	GitDir string
	// WorkTree is the worktree paths are told relative to ("" when bare:
	// every path is outside).
	WorkTree string
	// On reports whether capture is on (a git config switch).
	On func(ctx context.Context) bool
	// Now is the clock stale buffers are judged by.
	Now func() time.Time
	// Warn is told what could not be recorded.
	Warn func(format string, args ...any)
}

// Buffers are a worktree's capture buffers and agent session.
type Buffers struct {
	dir, sessionFile, workTree string
	on                         func(context.Context) bool
	now                        func() time.Time
	warn                       func(string, ...any)
}

// New returns the Buffers o describes.
func New(o Options) *Buffers {
	return &Buffers{
		dir:         filepath.Join(o.GitDir, "synaptic-capture"),
		sessionFile: filepath.Join(o.GitDir, "synaptic-agent-session"),
		workTree:    o.WorkTree, on: o.On, now: o.Now, warn: o.Warn,
	}
}

// Prompt records the agent's prompt as the start of an exchange.
func (b *Buffers) Prompt(ctx context.Context, sessionID, prompt string) error {
	if strings.TrimSpace(prompt) == "" {
		return nil
	}
	return b.add(ctx, sessionID, line{Prompt: b.prompt(prompt)})
}

// prompt is a prompt as a buffer holds it: trimmed, clipped and scrubbed.
func (b *Buffers) prompt(prompt string) string {
	return b.scrub(excerpt.Clip(strings.TrimSpace(prompt), maxText))
}

// Tool records one tool call of the exchange under way.
func (b *Buffers) Tool(ctx context.Context, sessionID string, t ToolUse) error {
	if t.Tool == "" {
		return nil
	}
	l := line{Tool: excerpt.Clip(t.Tool, 64), What: b.scrub(excerpt.FirstLine(t.What, maxWhat))}
	for _, f := range t.Files {
		if rel, ok := b.inWorkTree(f); ok {
			l.Files = append(l.Files, rel)
		} else if f != "" {
			l.Outside++
		}
	}
	return b.add(ctx, sessionID, l)
}

// Take empties the session's buffer into the summary of the exchange it
// recorded, with outcome (the agent's last message, may be "") as what
// came of it, and whether its tools changed something. The summary is ""
// when capture is off or nothing was recorded.
func (b *Buffers) Take(ctx context.Context, sessionID, outcome string) (summary string, changed bool, err error) {
	path, ok := b.Path(sessionID)
	if !ok {
		return "", false, nil
	}
	// Each take renames the buffer to a name of its own, so two stop
	// hooks at once never read the same file; one left by a killed hook
	// (it may have been saved) is never read again and pruned with stale
	// buffers.
	taking := fmt.Sprintf("%s.fold-%d", path, os.Getpid())
	if err := os.Rename(path, taking); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("capture: %w", err)
	}
	defer os.Remove(taking)
	if !b.on(ctx) {
		return "", false, nil
	}
	lines, err := read(taking)
	if err != nil {
		return "", false, err
	}
	summary, changed = summarise(lines, b.scrub(excerpt.Clip(strings.TrimSpace(outcome), maxText)))
	return summary, changed, nil
}

// Prompts are the prompts of the exchange under way in the session,
// newest first, at most n, without current (the prompt being answered,
// which its hook recorded already).
func (b *Buffers) Prompts(sessionID, current string, n int) []string {
	path, ok := b.Path(sessionID)
	if !ok {
		return nil
	}
	lines, _ := read(path)
	current = b.prompt(current)
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if p := lines[i].Prompt; p != "" && p != current {
			out = append(out, p)
		}
	}
	return out
}

// summarise is an exchange's summary, and whether its tools changed
// something; "" when nothing was recorded.
func summarise(lines []line, outcome string) (string, bool) {
	var prompts, whats, files []string
	tools := map[string]int{}
	seenFile, seenWhat := map[string]bool{}, map[string]bool{}
	outside := 0
	changed := false
	for _, l := range lines {
		if l.Prompt != "" {
			prompts = append(prompts, excerpt.Digest(l.Prompt))
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
		fmt.Fprintf(&b, "Exchange: %s\n", excerpt.Clip(strings.Join(prompts, " · "), maxPrompt))
	} else {
		b.WriteString("Exchange: (prompt not recorded)\n")
	}
	if outcome != "" {
		fmt.Fprintf(&b, "Outcome: %s\n", excerpt.Clip(strings.Join(strings.Fields(outcome), " "), 400))
	}
	if len(tools) > 0 {
		fmt.Fprintf(&b, "Tools: %s\n", toolCounts(tools))
	}
	if len(whats) > 0 {
		fmt.Fprintf(&b, "Ran: %s\n", strings.Join(whats, "; "))
	}
	if len(files) > 0 || outside > 0 {
		shown := files[:min(len(files), maxFiles)]
		l := strings.Join(shown, ", ")
		if more := len(files) - len(shown); more > 0 {
			l += fmt.Sprintf(" and %d more", more)
		}
		if outside > 0 {
			l = strings.TrimPrefix(l+fmt.Sprintf(", %d outside the repository (not recorded)", outside), ", ")
		}
		fmt.Fprintf(&b, "Files: %s\n", l)
	}
	return strings.TrimSpace(b.String()), changed
}

// toolCounts lists tools with their uses, most used first.
func toolCounts(tools map[string]int) string {
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
	return strings.Join(names, ", ")
}

// add appends a line to the session's buffer, when capture is on. A line
// is written with one append, so concurrent tool hooks do not interleave.
func (b *Buffers) add(ctx context.Context, sessionID string, l line) error {
	path, ok := b.Path(sessionID)
	if !ok || !b.on(ctx) {
		return nil
	}
	data, err := json.Marshal(l)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() > maxBytes {
		return nil // a runaway exchange: its start is kept
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("capture: %w", err)
	}
	_, err = f.Write(append(data, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// Path is the buffer of a session (the agent's recorded session when
// sessionID is ""); false when there is no session to capture for.
func (b *Buffers) Path(sessionID string) (string, bool) {
	if sessionID == "" {
		sessionID = b.Session()
	}
	if sessionID == "" {
		return "", false
	}
	h := sha256.Sum256([]byte(sessionID))
	return filepath.Join(b.dir, hex.EncodeToString(h[:8])+".jsonl"), true
}

// Prune removes buffers of sessions that stopped without a stop hook, and
// takes of killed stop hooks, once they are a week old.
func (b *Buffers) Prune() {
	ents, _ := os.ReadDir(b.dir)
	for _, d := range ents {
		if fi, err := d.Info(); err == nil && b.now().Sub(fi.ModTime()) > stale {
			os.Remove(filepath.Join(b.dir, d.Name()))
		}
	}
}

// read reads a buffer; lines that do not parse (a torn write) are
// skipped.
func read(path string) ([]line, error) {
	data, err := regular.ReadFile(path, maxFile)
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	var out []line
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, maxBytes)
	for sc.Scan() {
		var l line
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
func (b *Buffers) scrub(text string) string {
	text, _ = secrets.Redact(text)
	return pathRE().ReplaceAllStringFunc(text, func(m string) string {
		sub := pathRE().FindStringSubmatch(m)
		if rel, ok := b.inWorkTree(sub[2]); ok {
			return sub[1] + rel
		}
		return sub[1] + "[path outside the repository]"
	})
}

// inWorkTree is path relative to the worktree, if it lies inside it.
// Relative paths are taken from the worktree; "~/" is the home directory.
func (b *Buffers) inWorkTree(path string) (string, bool) {
	root := b.workTree
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

// RecordSession notes id as the agent session of this worktree, so that
// a server the agent started (which is told no session id) saves into the
// same session as the hooks. It writes only when the id changes.
func (b *Buffers) RecordSession(id string) {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 200 || !memory.ValidName(id) || b.Session() == id {
		return
	}
	if err := atomicfile.Write(b.sessionFile, []byte(id+"\n"), 0o600); err != nil {
		b.warn("cannot record the agent session: %v", err)
	}
}

// Session is the session the agent hooks last recorded for this worktree,
// or "".
func (b *Buffers) Session() string {
	data, err := regular.ReadFile(b.sessionFile, 256)
	id := strings.TrimSpace(string(data))
	if err != nil || !memory.ValidName(id) {
		return ""
	}
	return id
}
