// Package agentsetup writes, and takes out again, what a coding agent
// needs to use git-synaptic: the MCP server in the agent's MCP
// configuration, git-synaptic's hooks for the lifecycle events the agent
// has, and, for the events it lacks, a marked block in its instruction
// file. Files are merged, never overwritten: the user's other servers,
// hooks and comments stay as they were. The first change to a file keeps a
// backup of it in the git directory, and --remove puts a file back byte
// for byte while nobody else has changed it since (else it takes out
// exactly git-synaptic's entries). Only files inside the working tree are
// written, never through a symlink that leaves it.
package agentsetup

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/internal/lockfile"
	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// ErrConfig marks a configuration file that cannot be changed safely: not
// valid JSON, not the shape its agent documents, or a path that leads out
// of the repository. Nothing is written then.
var ErrConfig = errors.New("agent configuration refused")

// Options says where to work.
type Options struct {
	Root     string // the working tree
	StateDir string // backups and the record of what was written (in the git dir)
	Home     string // the user's home, where Detect looks for user-level configuration
	Rule     string // the auto-distill rule, for instruction files
}

// Change is one file init changed.
type Change struct {
	Agent  string `json:"agent"`
	Path   string `json:"path"`   // relative to the working tree, slash-separated
	Action string `json:"action"` // created, updated, removed (a file init created), restored (from the backup)
	Backup string `json:"backup,omitempty"`
	Note   string `json:"note,omitempty"` // something the user should know
}

// maxFile bounds a configuration file read.
const maxFile = 16 << 20

// record is what init remembers about a file it wrote.
type record struct {
	Created bool     `json:"created"`        // the file did not exist
	Dirs    []string `json:"dirs,omitempty"` // folders init made for it, deepest last
	Backup  string   `json:"backup,omitempty"`
	Wrote   string   `json:"wrote"` // sha256 of what init last wrote
	// Exact: nobody else has changed the file between its backup (or its
	// creation) and init's last write, so --remove may put the backup back.
	Exact bool `json:"exact"`
}

type state struct {
	Files map[string]*record `json:"files"`
}

func (o Options) statePath() string { return filepath.Join(o.StateDir, "agents.json") }

// lock serialises inits on the record, so that two at once keep both
// their records.
// open takes the agents lock (one init at a time per repository) and
// reads the records under it; unlock releases the lock.
func (o Options) open() (st *state, unlock func(), err error) {
	if unlock, err = lockfile.Lock(filepath.Join(o.StateDir, "agents.lock")); err != nil {
		return nil, nil, err
	}
	if st, err = o.load(); err != nil {
		unlock()
		return nil, nil, err
	}
	return st, unlock, nil
}

func (o Options) load() (*state, error) {
	st := &state{Files: map[string]*record{}}
	b, err := regular.ReadFile(o.statePath(), maxFile)
	if errors.Is(err, fs.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return nil, err
	}
	if json.Unmarshal(b, st) != nil || st.Files == nil {
		st.Files = map[string]*record{} // a damaged record: --remove works by entries
	}
	return st, nil
}

func (o Options) save(st *state) error {
	if err := os.MkdirAll(o.StateDir, 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.Write(o.statePath(), append(b, '\n'), 0o600)
}

func digest(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

// resolve is where rel really is: inside the working tree, following
// symlinks that stay inside it.
func (o Options) resolve(rel string) (string, error) {
	root, err := filepath.EvalSymlinks(o.Root)
	if err != nil {
		return "", err
	}
	p := filepath.Join(root, filepath.FromSlash(rel))
	// the longest part of the path that exists, with its links followed
	existing, rest := p, ""
	for {
		if _, err := os.Lstat(existing); err == nil {
			break
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			break
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
	real, err := filepath.EvalSymlinks(existing)
	if err != nil {
		return "", fmt.Errorf("%w: %s is a symlink that leads nowhere; nothing was written", ErrConfig, rel)
	}
	real = filepath.Join(real, rest)
	if r, err := filepath.Rel(root, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: %s leads outside the repository (to %s); nothing was written", ErrConfig, rel, real)
	}
	return real, nil
}

// file is one file an agent's setup edits.
type file struct {
	rel string
	// add returns the text with git-synaptic's part in it (base is nil
	// for a file that does not exist), and a note for the user.
	add func(base []byte) ([]byte, string, error)
	// take returns the text without git-synaptic's part (nil: delete the
	// file, for one that is git-synaptic's alone).
	take func(cur []byte) ([]byte, error)
}

// Setup wires agent into the repository. It reports what it changed.
func Setup(o Options, a agents.Agent) ([]Change, error) {
	st, unlock, err := o.open()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var changes []Change
	for _, f := range plan(a, o.Rule, o.Root) {
		ch, err := o.setupFile(st, a, f)
		if ch != nil {
			changes = append(changes, *ch)
		}
		if err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// read finds a file: where it really is, its text, whether it exists.
func (o Options) read(rel string) (string, []byte, bool, error) {
	path, err := o.resolve(rel)
	if err != nil {
		return "", nil, false, err
	}
	cur, err := regular.ReadFile(path, maxFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return path, nil, false, nil
	case err != nil:
		return "", nil, false, fmt.Errorf("read %s: %w", rel, err)
	}
	return path, cur, true, nil
}

func (o Options) setupFile(st *state, a agents.Agent, f file) (*Change, error) {
	path, cur, exists, err := o.read(f.rel)
	if err != nil {
		return nil, err
	}
	next, note, err := f.add(cur) // nil when there is no file
	if err != nil {
		return nil, err
	}
	if exists && bytes.Equal(next, cur) {
		if note != "" {
			return &Change{Agent: a.Name, Path: f.rel, Action: "unchanged", Note: note}, nil
		}
		return nil, nil
	}
	rec := st.Files[f.rel]
	ch := &Change{Agent: a.Name, Path: f.rel, Action: "updated", Note: note}
	switch {
	case !exists:
		rec = &record{Created: true, Exact: true}
		ch.Action = "created"
	case rec == nil:
		rec = &record{Exact: true, Backup: filepath.ToSlash(filepath.Join("backup", f.rel))}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(o.StateDir, rec.Backup)), 0o700); err != nil {
			return nil, err
		}
		if err := atomicfile.Write(filepath.Join(o.StateDir, rec.Backup), cur, 0o600); err != nil {
			return nil, fmt.Errorf("back up %s: %w", f.rel, err)
		}
		ch.Backup = filepath.Join(o.StateDir, rec.Backup)
	case digest(cur) != rec.Wrote && !o.isBackup(rec, cur):
		rec.Exact = false // changed by someone else since: --remove takes entries out
	}
	if !exists {
		rec.Dirs = missingDirs(filepath.Dir(path))
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	// The record goes first: killed before the write, the file is as it
	// was and --remove finds nothing of ours in it; after, it is exact.
	rec.Wrote = digest(next)
	st.Files[f.rel] = rec
	if err := o.save(st); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, next, mode); err != nil {
		return nil, fmt.Errorf("write %s: %w", f.rel, err)
	}
	return ch, nil
}

// isBackup reports whether text is the file's backup (a setup was killed
// before it wrote the file).
func (o Options) isBackup(rec *record, text []byte) bool {
	if rec.Backup == "" {
		return false
	}
	b, err := regular.ReadFile(filepath.Join(o.StateDir, rec.Backup), maxFile)
	return err == nil && bytes.Equal(b, text)
}

// missingDirs are dir and its parents that do not exist yet, outermost
// first.
func missingDirs(dir string) []string {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || filepath.Dir(d) == d {
			break
		}
		missing = append([]string{d}, missing...)
	}
	return missing
}

// Remove takes agent's wiring out again. A file init created and nobody
// changed since goes; one it changed goes back to its backup; otherwise
// git-synaptic's entries are taken out and the rest is kept.
func Remove(o Options, a agents.Agent) ([]Change, error) {
	st, unlock, err := o.open()
	if err != nil {
		return nil, err
	}
	defer unlock()
	var changes []Change
	var made []string // folders init made, which go when left empty
	recorded := false
	for _, f := range plan(a, o.Rule, o.Root) {
		if rec := st.Files[f.rel]; rec != nil {
			made = append(made, rec.Dirs...)
			recorded = true
		}
		ch, err := o.removeFile(st, a, f)
		if ch != nil {
			changes = append(changes, *ch)
			err = errors.Join(err, o.save(st))
		}
		if err != nil {
			return changes, err
		}
	}
	// deepest first; only empty ones go
	sort.Slice(made, func(i, j int) bool { return len(made[i]) > len(made[j]) })
	for _, d := range made {
		_ = os.Remove(d)
	}
	if recorded { // records of files gone or left as they were
		return changes, o.save(st)
	}
	return changes, nil
}

func (o Options) removeFile(st *state, a agents.Agent, f file) (*Change, error) {
	path, cur, exists, err := o.read(f.rel)
	if err != nil {
		return nil, err
	}
	rec := st.Files[f.rel]
	if !exists {
		delete(st.Files, f.rel)
		return nil, nil
	}
	ch := &Change{Agent: a.Name, Path: f.rel}
	if rec != nil && rec.Exact && digest(cur) == rec.Wrote {
		if rec.Created {
			if err := os.Remove(path); err != nil {
				return nil, err
			}
			delete(st.Files, f.rel)
			ch.Action = "removed"
			return ch, nil
		}
		// the backup, less what an earlier version of init wrote there
		// (without a backup, git-synaptic's entries are taken out below)
		if b, err := regular.ReadFile(filepath.Join(o.StateDir, rec.Backup), maxFile); err == nil {
			if b, err = f.take(b); err != nil {
				return nil, err
			}
			if b == nil {
				err = os.Remove(path)
			} else {
				err = atomicfile.Write(path, b, modeOf(path))
			}
			if err != nil {
				return nil, err
			}
			delete(st.Files, f.rel)
			ch.Action = "restored"
			return ch, nil
		}
	}
	next, err := f.take(cur)
	if err != nil {
		return nil, err
	}
	delete(st.Files, f.rel)
	switch {
	case next == nil:
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		ch.Action = "removed"
	case bytes.Equal(next, cur):
		return nil, nil
	default:
		if err := atomicfile.Write(path, next, modeOf(path)); err != nil {
			return nil, err
		}
		ch.Action = "updated"
	}
	return ch, nil
}

func modeOf(path string) fs.FileMode {
	if fi, err := os.Stat(path); err == nil {
		return fi.Mode().Perm()
	}
	return 0o644
}

// markers are the paths whose presence says an agent is used: in the
// working tree, and in the user's home.
var markers = map[string]struct{ project, user []string }{
	"claude":   {[]string{".claude", ".mcp.json", "CLAUDE.md"}, []string{".claude", ".claude.json"}},
	"codex":    {[]string{".codex"}, []string{".codex"}},
	"gemini":   {[]string{".gemini", "GEMINI.md"}, []string{".gemini"}},
	"cursor":   {[]string{".cursor", ".cursorrules"}, []string{".cursor"}},
	"opencode": {[]string{"opencode.json", "opencode.jsonc", ".opencode"}, []string{".config/opencode"}},
	"vscode":   {[]string{".vscode"}, []string{".vscode", ".config/Code"}},
}

// Detect lists the agents whose project or user configuration is present.
func Detect(o Options) []agents.Agent {
	var found []agents.Agent
	for _, a := range agents.All {
		m := markers[a.Name]
		if present(o.Root, m.project) || (o.Home != "" && present(o.Home, m.user)) {
			found = append(found, a)
		}
	}
	return found
}

func present(dir string, names []string) bool {
	for _, n := range names {
		if _, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(n))); err == nil {
			return true
		}
	}
	return false
}
