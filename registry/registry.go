// Package registry keeps a user's list of projects: the repositories whose
// memory 'search --all-projects' and the session start's "From other
// projects" read. It is one small JSON file in the user's data directory;
// it holds paths only, never memory, so losing it loses nothing but the
// list.
package registry

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/internal/lockfile"
	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// maxRegistry bounds the file read: a list of paths, some kilobytes.
const maxRegistry = 16 << 20

// Project is one registered repository.
type Project struct {
	// Path is the repository's top-level directory (its main worktree).
	Path string `json:"path"`
	// Added is when it was registered.
	Added time.Time `json:"added"`
}

// File is a registry file. Its methods may be called from several
// processes at once: changes are made under a lock and written atomically.
type File struct {
	path string
}

// DefaultPath is where a user's registry lives:
// $XDG_DATA_HOME/git-synaptic/projects.json, else
// ~/.local/share/git-synaptic/projects.json.
func DefaultPath() (string, error) {
	if d := os.Getenv("XDG_DATA_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "git-synaptic", "projects.json"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("projects: no home directory for the project list: %w", err)
	}
	return filepath.Join(home, ".local", "share", "git-synaptic", "projects.json"), nil
}

// Open returns the registry at path (which need not exist yet).
func Open(path string) *File { return &File{path: path} }

// Path is the file's path.
func (f *File) Path() string { return f.path }

type document struct {
	Projects []Project `json:"projects"`
}

// List returns the registered projects, sorted by path.
func (f *File) List() ([]Project, error) {
	b, err := regular.ReadFile(f.path, maxRegistry)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("projects: %w", err)
	}
	var d document
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("projects: %s is not a project list (%v); fix or delete it, then run 'git synaptic projects add' in each repository", f.path, err)
	}
	sort.Slice(d.Projects, func(i, j int) bool { return d.Projects[i].Path < d.Projects[j].Path })
	return d.Projects, nil
}

// Add registers the repository at path (absolute, cleaned), reporting
// whether it was new.
func (f *File) Add(path string, now time.Time) (added bool, err error) {
	err = f.change(func(ps []Project) []Project {
		for _, p := range ps {
			if p.Path == path {
				return ps
			}
		}
		added = true
		return append(ps, Project{Path: path, Added: now.UTC()})
	})
	return added, err
}

// Remove unregisters path, reporting whether it was registered.
func (f *File) Remove(path string) (removed bool, err error) {
	err = f.change(func(ps []Project) []Project {
		out := ps[:0]
		for _, p := range ps {
			if p.Path == path {
				removed = true
				continue
			}
			out = append(out, p)
		}
		return out
	})
	return removed, err
}

// change applies edit to the list under an exclusive lock and writes the
// result through a temporary file and a rename, so that a reader never
// sees half a file and a killed writer leaves the old one.
func (f *File) change(edit func([]Project) []Project) error {
	unlock, err := lockfile.Lock(f.path + ".lock") // makes the folder too
	if err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	defer unlock()
	ps, err := f.List()
	if err != nil {
		return err
	}
	ps = edit(ps)
	sort.Slice(ps, func(i, j int) bool { return ps[i].Path < ps[j].Path })
	b, err := json.MarshalIndent(document{Projects: ps}, "", "  ")
	if err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	if err := atomicfile.Write(f.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("projects: %w", err)
	}
	return nil
}
