// Package app is git-synaptic's one API: the CLI, the MCP server and the
// hooks all call a Service, which keeps the memory refs (the truth) and the
// cache (derived, disposable) in step. A Service's work is grouped in
// parts over one shared core (parts.go): Memory writes, Recall reads and
// searches, Agent serves coding agents, Code indexes commits and
// co-change, Sharing sets up and syncs. The application owns its types
// (types.go); the layers below it (gitstore, cache, embed, rank,
// cochange) never reach the front ends.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/capture"
	"github.com/git-synaptic/git-synaptic/internal/history"
	"github.com/git-synaptic/git-synaptic/internal/memlog"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Memory refs.
const (
	SharedRef     = "refs/synaptic/memory"            // pushed and fetched
	PrivateRef    = gitstore.PrivatePrefix + "memory" // in the private repository: never pushed
	sharedPrefix  = "refs/synaptic/"
	privatePrefix = gitstore.PrivatePrefix
	remotePrefix  = "refs/remotes/"
)

// Options configure a Service.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// AsOf, when set, is the time relative times in search queries ("last
	// week") are read against, instead of the clock (search --as-of).
	AsOf time.Time
	// Warn receives warnings (unreadable memory objects, cache trouble); nil
	// means os.Stderr.
	Warn io.Writer
	// BusyTimeout bounds how long a cache write waits for another
	// process (0: a minute). Git hooks set it short.
	BusyTimeout time.Duration
	// Progress, if set, is told how far long indexing runs have got
	// (thousands of changed memory files, e.g. a rebuild).
	Progress func(done, total int)
	// Judging, if set, is told how far the decay verdicts that follow a
	// rebuild have got (a million entries: about 8 s).
	Judging func(done, total int)
	// Transfers, if set, receives git's own progress of fetches and
	// pushes (a terminal: a large memory takes minutes to move).
	Transfers io.Writer
	// RawScores turns off the tier, recency and access weights of
	// semantic search (retrieval benchmarks only).
	RawScores bool
	// NoCodeChecks reads memory without its standing against the code:
	// nothing is marked or ranked by branch (the baseline of make bench
	// BENCH=RealBranches; GIT_SYNAPTIC_CODE_CHECKS=off).
	NoCodeChecks bool
	// Session and Agent are the agent session and agent ids saves carry
	// when a request names none ($GIT_SYNAPTIC_SESSION and
	// $GIT_SYNAPTIC_AGENT, which the front ends read).
	Session, Agent string
	// FollowAgentSession, when Session is empty, makes saves carry the
	// session the agent's hooks recorded for this worktree (session-start
	// and prompt), so that a server the agent started and the hooks agree
	// on one session. The MCP server sets it.
	FollowAgentSession bool
	// DefaultSession is the session when none of the above gives one.
	DefaultSession string
	// Model names the embedding model to load ("" = embed.DefaultModel)
	// and EmbedBackend its runtime ("" = the best installed).
	Model, EmbedBackend string
	// Embedder, if set, is used instead of loading Model: a fake in tests.
	// The Service does not close it.
	Embedder Embedder
	// LoadEmbedder, if set, is called instead of loading Model when the
	// Service first needs the model, at the same moment it would load it:
	// the warm process hands out the model it keeps loaded. The Service
	// does not close what it returns.
	LoadEmbedder func(model, backend string) (Embedder, error)
	// Projects is the user's project list (registry.DefaultPath, which the
	// front ends give): init registers the repository there, and searches
	// across projects read it. Empty: no list.
	Projects string
}

// Service is an open repository with its memory cache. Its work is
// grouped in parts over one shared core, each reached by an accessor:
// Memory (writes and their upkeep), Recall (reads and search), Agent
// (session context, handoffs, rules), Code (commit index, co-change, git
// hooks) and Sharing (init, push, sync).
type Service struct {
	*core
}

// core is what every part shares: the repository, the cache, the clock,
// the embedder and the configuration.
type core struct {
	repo           *gitstore.Repo
	hist           *history.Code    // the commit index and co-change over repo and cache
	capture        *capture.Buffers // the agent's exchanges as they happen, and its session
	log            memlog.Store     // the repository as memory's log: refs, appends, diffs
	conn           cacheConn        // the cache, opened on first use (cacheconn.go)
	now            func() time.Time
	per            Per       // this request's values (warnings, progress, --as-of, session, agent)
	transfersOut   io.Writer // Options.Transfers
	followAgent    bool
	defaultSession string
	model          modelSlot // the embedding model, had on first use (modelslot.go)
	rawScores      bool
	noCodeChecks   bool                  // Options.NoCodeChecks
	longLived      bool                  // held by a Session
	recent         map[string]*recentSet // recentVectors' answers, when longLived
	projects       string                // Options.Projects
	others         map[string]*Service   // other projects read, kept open until Close (projects.go)
	lines          lineMemo              // memory's standing against HEAD (code.go)
	rulesMemo      rulesMemo             // pendingRules' answer, when longLived
	profileMemo    profileMemo           // the cache's part of profile, when longLived
	crossMemo      crossMemo             // crossRows' answer, when longLived
}

// Open opens the repository containing dir. The cache is opened lazily.
func Open(dir string, opts Options) (*Service, error) {
	repo, err := gitstore.Open(dir)
	if err != nil {
		return nil, err
	}
	return newService(repo, opts), nil
}

// newService is Open for a repository already opened.
func newService(repo *gitstore.Repo, opts Options) *Service {
	s := &core{repo: repo, log: repo, now: opts.Now, per: opts.Per(), transfersOut: opts.Transfers, rawScores: opts.RawScores, noCodeChecks: opts.NoCodeChecks,
		followAgent: opts.FollowAgentSession, defaultSession: opts.DefaultSession, projects: opts.Projects,
		model: modelSlot{name: opts.Model, backend: opts.EmbedBackend, emb: opts.Embedder, lend: opts.LoadEmbedder}}
	if s.model.name == "" {
		s.model.name = embed.DefaultModel
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.per.Warn == nil {
		s.per.Warn = os.Stderr
	}
	s.conn = cacheConn{path: filepath.Join(repo.CommonDir(), "synaptic", "cache.db"), busy: opts.BusyTimeout, warnf: s.warnf}
	s.capture = capture.New(capture.Options{GitDir: repo.GitDir(), WorkTree: repo.WorkTree(), On: s.captureOn, Now: s.now, Warn: s.warnf})
	s.hist = history.New(history.Options{
		Repo: repo,
		Cache: func() (history.Cache, error) {
			c, err := s.openCache()
			if err != nil {
				return nil, err // not a nil *cache.Cache in the interface
			}
			return c, nil
		},
		Refresh:  func(ctx context.Context) error { _, err := s.ready(ctx); return err },
		Snapshot: filepath.Join(filepath.Dir(s.cachePath()), snapshotFile),
		Progress: opts.Progress,
	})
	return &Service{s}
}

// Close releases the cache.
func (s *Service) Close() error {
	err := s.closeOthers()
	err = errors.Join(err, s.repo.Close())
	err = errors.Join(err, s.model.close())
	if cerr := s.conn.close(); err == nil {
		err = cerr
	}
	return err
}

// snapshotFile holds the co-change model beside the cache, so that a
// command loads it instead of learning the whole history again; it is as
// disposable as the cache.
const snapshotFile = "cochange.model"

// inTx runs f in one cache transaction.
func (s *core) inTx(ctx context.Context, f func(*cache.Tx) error) error {
	c, err := s.openCache()
	if err != nil {
		return err
	}
	return c.Update(ctx, f)
}

// cachePath is where the cache lives: inside the git common dir, so it is
// never committed and is shared by every worktree.
func (s *core) cachePath() string { return s.conn.path }

func (s *core) warnf(format string, args ...any) {
	fmt.Fprintf(s.per.Warn, "warning: "+format+"\n", args...)
}

// openCache returns the cache, opened on first use.
func (s *core) openCache() (*cache.Cache, error) { return s.conn.open() }

// identity is the git identity new memory would be written under ("" when
// none is configured).
func (s *core) identity(ctx context.Context) string {
	id, _ := s.repo.Ident(ctx)
	return id
}

// author is the git identity for new memory, or a clear error.
func (s *core) author(ctx context.Context) (string, error) {
	return s.repo.Ident(ctx)
}

// sig is the commit signature for memory commits.
func (s *core) sig(ctx context.Context) gitstore.Signature {
	id, err := s.repo.Ident(ctx)
	if err != nil {
		id = "git-synaptic <git-synaptic@localhost>"
	}
	return gitstore.ParseIdent(id, s.now())
}

// project names this repository: the origin remote's repository name, else
// the working tree's folder name.
func (s *core) project(ctx context.Context) string { return projectName(s.repo) }

// projectName is a repository's name: the last part of its origin URL,
// else of its directory.
func projectName(repo *gitstore.Repo) string {
	if url := repo.RemoteURL("origin"); url != "" {
		u := strings.TrimSuffix(strings.TrimRight(url, "/"), ".git")
		if i := strings.LastIndexAny(u, "/:"); i >= 0 {
			u = u[i+1:]
		}
		if u != "" {
			return u
		}
	}
	dir := repo.WorkTree()
	if dir == "" {
		dir = strings.TrimSuffix(repo.CommonDir(), "/.git")
	}
	return strings.TrimSuffix(path.Base(filepath.ToSlash(dir)), ".git")
}

// refFor is the ref an entry's operations are written to.
func refFor(row Entry) (string, error) {
	switch {
	case row.Type == memory.TypeNote:
		return "", Invalidf("%s is a commit note; change it with git notes --ref=synaptic", short(row.ID))
	case strings.HasPrefix(row.Source, sharedPrefix), strings.HasPrefix(row.Source, privatePrefix):
		return row.Source, nil
	case SubscriptionOf(row.Source) != "":
		return "", Invalidf("entry %s comes from the subscription %q, which is read-only here: change it in that repository", short(row.ID), SubscriptionOf(row.Source))
	}
	return "", Invalidf("entry %s comes from %s, which git-synaptic does not write", short(row.ID), row.Source)
}

func short(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// Pager is the pager git would use here (GIT_PAGER, core.pager, PAGER,
// git's default); "less" when git cannot say.
func (s *Service) Pager(ctx context.Context) string {
	if p, err := s.repo.GitVar(ctx, "GIT_PAGER"); err == nil && p != "" {
		return p
	}
	return "less"
}

// Editor is the editor git would use here (GIT_EDITOR, core.editor,
// VISUAL, EDITOR, git's default); "vi" when git cannot say.
func (s *Service) Editor(ctx context.Context) string {
	if ed, err := s.repo.GitVar(ctx, "GIT_EDITOR"); err == nil && ed != "" {
		return ed
	}
	return "vi"
}
