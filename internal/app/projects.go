package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/registry"
)

// A user's projects are the repositories in their project list
// (registry): init adds each one. Searches across projects and the
// session start's "From other projects" open each project's own cache,
// which follows that project's refs like any command run there: the
// cross-project index is the projects' caches, nothing more to keep.

// ProjectInfo is a registered project, and why it cannot be read when it
// cannot (moved or deleted, no longer a repository).
type ProjectInfo struct {
	Name    string    `json:"name"`
	Path    string    `json:"path"`
	Added   time.Time `json:"added"`
	Problem string    `json:"problem,omitempty"`
}

// ErrNoProjectList is returned when there is no project list to use
// (Options.Projects is empty).
var ErrNoProjectList = errors.New("no project list (GIT_SYNAPTIC_PROJECTS is off, or there is no home directory)")

// homePath is the path a repository is registered under: the top of its
// main worktree, or its git directory when it has none. Every worktree of
// a repository has one home, so a repository is listed once.
func homePath(repo *gitstore.Repo) string {
	c := filepath.Clean(repo.CommonDir())
	if filepath.Base(c) == ".git" {
		return filepath.Dir(c)
	}
	return c
}

// projectList is the user's project list, or ErrNoProjectList.
func projectList(path string) (*registry.File, error) {
	if path == "" {
		return nil, ErrNoProjectList
	}
	return registry.Open(path), nil
}

// Projects lists the projects in the list at path, saying which cannot be
// read.
func Projects(path string) ([]ProjectInfo, error) {
	list, err := projectList(path)
	if err != nil {
		return nil, err
	}
	ps, err := list.List()
	if err != nil {
		return nil, err
	}
	out := make([]ProjectInfo, 0, len(ps))
	for _, p := range ps {
		info := ProjectInfo{Name: filepath.Base(p.Path), Path: p.Path, Added: p.Added}
		if repo, problem := openProjectRepo(p.Path); problem != "" {
			info.Problem = problem
		} else {
			info.Name = projectName(repo)
			repo.Close()
		}
		out = append(out, info)
	}
	return out, nil
}

// openProjectRepo opens a registered project's repository, or says why it
// cannot.
func openProjectRepo(path string) (*gitstore.Repo, string) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, "moved or deleted"
	}
	repo, err := gitstore.Open(path)
	if err != nil {
		return nil, "not readable as a git repository: " + err.Error()
	}
	if homePath(repo) != filepath.Clean(path) {
		repo.Close()
		return nil, "no longer a repository of its own (now inside another one)"
	}
	return repo, ""
}

// AddProject registers the repository containing dir in the list at path
// and reports whether it was new.
func AddProject(path, dir string, now time.Time) (ProjectInfo, bool, error) {
	list, err := projectList(path)
	if err != nil {
		return ProjectInfo{}, false, err
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		return ProjectInfo{}, false, err
	}
	defer repo.Close()
	return addRepo(list, repo, now)
}

// addRepo registers repo in list.
func addRepo(list *registry.File, repo *gitstore.Repo, now time.Time) (ProjectInfo, bool, error) {
	home, err := filepath.Abs(homePath(repo))
	if err != nil {
		return ProjectInfo{}, false, fmt.Errorf("projects: %w", err)
	}
	added, err := list.Add(home, now)
	return ProjectInfo{Name: projectName(repo), Path: home, Added: now}, added, err
}

// RemoveProject takes dir out of the list at path and returns the path it
// removed, or ErrNotProject. dir may be a repository (any directory in it)
// or a listed path that no longer exists.
func RemoveProject(path, dir string) (string, error) {
	list, err := projectList(path)
	if err != nil {
		return "", err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("projects: %w", err)
	}
	abs = filepath.Clean(abs)
	removed, err := list.Remove(abs)
	if err == nil && !removed {
		// dir may be a directory inside a listed repository
		if repo, oerr := gitstore.Open(abs); oerr == nil {
			abs = homePath(repo)
			repo.Close()
			removed, err = list.Remove(abs)
		}
	}
	if err == nil && !removed {
		err = fmt.Errorf("%s: %w", abs, ErrNotProject)
	}
	return abs, err
}

// Register adds this repository to the user's project list (init does),
// reporting whether it was new. Without a list it does nothing.
func (s *Sharing) Register() (bool, error) {
	if s.projects == "" {
		return false, nil
	}
	_, added, err := addRepo(registry.Open(s.projects), s.repo, s.now())
	return added, err
}

// ProjectHit is a hit of a search across projects.
type ProjectHit struct {
	Hit
	Project     string `json:"project"`
	ProjectPath string `json:"project_path"`
	// Here is set for hits in the repository the search ran in.
	Here bool `json:"here,omitempty"`
}

// ProjectsInfo says what a search across projects searched: the search
// (of this project, or of the first readable one) and the projects it
// could not read.
type ProjectsInfo struct {
	SearchInfo
	Searched int           `json:"searched"`
	Skipped  []ProjectInfo `json:"skipped,omitempty"`
}

// addProjects searches every other project in the user's list as req
// and ranks their hits with out, this repository's, as one list, each
// labelled with its project. A project that cannot be read is reported
// in the info and skipped.
func (s *Recall) addProjects(ctx context.Context, req SearchRequest, out []ProjectHit, info ProjectsInfo) ([]ProjectHit, ProjectsInfo, error) {
	query, filter, mode := req.Query, req.Filter, req.Mode
	if s.projects == "" {
		return out, info, nil
	}
	ps, err := registry.Open(s.projects).List()
	if err != nil {
		return nil, info, err
	}
	// The other projects search as this one did: with its model (loaded
	// once, the query embedded once), or by words alone when it had none.
	if info.Mode == ModeBM25 {
		mode = "bm25"
	}
	here := homePath(s.repo)
	for _, p := range ps {
		if p.Path == here {
			continue
		}
		other, pi := s.other(p)
		if other != nil {
			found, _, err := other.search(ctx, searchReq{query: query, filter: filter, mode: mode, who: forReader})
			if err != nil && ctx.Err() != nil {
				return nil, info, ctx.Err()
			}
			if err != nil {
				pi.Problem = err.Error()
			}
			out = append(out, labelHits(found, pi.Name, pi.Path, false)...)
		}
		if pi.Problem != "" {
			info.Skipped = append(info.Skipped, pi)
			continue
		}
		info.Searched++
	}
	slices.SortStableFunc(out, func(a, b ProjectHit) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), b.Created.Compare(a.Created))
	})
	// An entry reached through two projects (both subscribe to the same
	// memory) is listed once, where it scored best.
	seen := map[string]bool{}
	out = slices.DeleteFunc(out, func(h ProjectHit) bool {
		dup := seen[h.ID]
		seen[h.ID] = true
		return dup
	})
	if lim := cmp.Or(filter.Limit, 10); len(out) > lim {
		out = out[:lim]
	}
	return out, info, nil
}

// CodeOf is the Code of the registered project named name (its
// repository name, as search results label it, or its folder's name),
// opened as cross-project search opens it; this project's own for its own
// name or "".
func (s *Service) CodeOf(name string) (*Code, error) {
	here := homePath(s.repo)
	if name == "" || name == s.project(context.Background()) || name == filepath.Base(here) {
		return s.hist, nil
	}
	if s.projects == "" {
		return nil, Invalidf("no project list here, so no project %q (git synaptic projects)", name)
	}
	ps, err := registry.Open(s.projects).List()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, p := range ps {
		if p.Path == here {
			continue
		}
		o, pi := s.other(p)
		if o != nil && (pi.Name == name || filepath.Base(p.Path) == name) {
			return o.hist, nil
		}
		names = append(names, pi.Name)
	}
	return nil, Invalidf("no registered project %q (known: %s)", name, strings.Join(names, ", "))
}

func labelHits(hits []Hit, name, path string, here bool) []ProjectHit {
	out := make([]ProjectHit, len(hits))
	for i, h := range hits {
		out[i] = ProjectHit{Hit: h, Project: name, ProjectPath: path, Here: here}
	}
	return out
}

// other opens another registered project with this one's settings and
// embedding model (a server keeps it open, a command closes it with this
// Service), or says in the info why it cannot. Its warnings are not this
// project's: they are dropped, and a project that cannot be searched is
// reported by the caller.
func (s *core) other(p registry.Project) (*core, ProjectInfo) {
	info := ProjectInfo{Name: filepath.Base(p.Path), Path: p.Path, Added: p.Added}
	emb := s.model.shared()
	if o := s.others[p.Path]; o != nil {
		if _, err := os.Stat(p.Path); errors.Is(err, fs.ErrNotExist) {
			info.Problem = "moved or deleted"
			return nil, info
		}
		o.model.adopt(emb) // opened by a search without the model
		info.Name = projectName(o.repo)
		return o.core, info
	}
	repo, problem := openProjectRepo(p.Path)
	if problem != "" {
		info.Problem = problem
		return nil, info
	}
	info.Name = projectName(repo)
	o := newService(repo, Options{Now: s.now, AsOf: s.per.AsOf, Warn: io.Discard, BusyTimeout: s.conn.busy, RawScores: s.rawScores,
		Model: s.model.name, EmbedBackend: s.model.backend, Embedder: emb})
	o.longLived, o.conn.hold = s.longLived, s.longLived // kept open as long as this one
	if s.others == nil {
		s.others = map[string]*Service{}
	}
	s.others[p.Path] = o
	return o.core, info
}

// closeOthers closes the other projects this Service opened.
func (s *core) closeOthers() error {
	var err error
	for path, o := range s.others {
		err = errors.Join(err, o.Close())
		delete(s.others, path)
	}
	return err
}

// queryMemo is an Embedder that embeds the last single text (a query)
// once for every project a search reads. Like the application, it is not
// safe for concurrent use.
type queryMemo struct {
	Embedder
	text string
	vec  []float32
}

// Embed embeds texts, reusing the vector of the last lone text.
func (m *queryMemo) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) != 1 {
		return m.Embedder.Embed(ctx, texts)
	}
	if m.vec != nil && m.text == texts[0] {
		return [][]float32{slices.Clone(m.vec)}, nil
	}
	v, err := m.Embedder.Embed(ctx, texts)
	if err == nil && len(v) == 1 {
		m.text, m.vec = texts[0], slices.Clone(v[0])
	}
	return v, err
}

// DefaultProjectList is where the user's project list lives unless
// configured otherwise ("" without a home directory).
func DefaultProjectList() string {
	p, _ := registry.DefaultPath()
	return p
}
