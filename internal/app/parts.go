package app

import (
	"context"
	"path/filepath"

	"github.com/git-synaptic/git-synaptic/gitstore"
	"github.com/git-synaptic/git-synaptic/internal/history"
)

// Memory writes memory and keeps it in shape: save, edit, pin, archive,
// purge, feedback, decay, patterns and consolidation.
type Memory struct{ *core }

// Recall reads memory: list, show, related entries and search, with the
// vectors search uses.
type Recall struct{ *core }

// Agent serves coding agents: session context, prompt context, handoffs,
// rules and corrections.
type Agent struct{ *core }

// Code knows the code's history: the commit index, co-change and the git
// hooks that keep them current. It is a component of its own
// (internal/history) that the Service builds over its repository and
// cache.
type Code = history.Code

// Sharing sets a repository up and moves memory between clones: init,
// pre-push and sync.
type Sharing struct{ *core }

// Memory returns the part that writes memory.
func (s *Service) Memory() *Memory { return s.memory() }

// Recall returns the part that reads and searches memory.
func (s *Service) Recall() *Recall { return s.recall() }

// Agent returns the part that serves coding agents.
func (s *Service) Agent() *Agent { return s.agent() }

// Code returns the part that indexes commits and mines co-change.
func (s *Service) Code() *Code { return s.hist }

// Sharing returns the part that sets up and syncs memory with remotes.
func (s *Service) Sharing() *Sharing { return s.sharing() }

func (c *core) memory() *Memory   { return &Memory{c} }
func (c *core) recall() *Recall   { return &Recall{c} }
func (c *core) agent() *Agent     { return &Agent{c} }
func (c *core) sharing() *Sharing { return &Sharing{c} }

// CachePath is where the cache lives: inside the git common dir, so it is
// never committed and is shared by every worktree.
func (s *Service) CachePath() string { return s.cachePath() }

// Identity is the git identity new memory would be written under ("" when
// none is configured).
func (s *Service) Identity(ctx context.Context) string { return s.identity(ctx) }

// Project names this repository: the origin remote's repository name, else
// the working tree's folder name.
func (s *Service) Project(ctx context.Context) string { return s.project(ctx) }

// Session is the agent session saves carry when they name none (see
// Options.Session, FollowAgentSession and DefaultSession), or "".
func (s *Service) Session() string { return s.sessionID() }

// AgentID is the agent id saves get when they name none (Options.Agent;
// "" when unset).
func (s *Service) AgentID() string { return s.per.Agent }

// Root is the repository's working tree, or its git dir when bare.
func (s *Service) Root() string {
	if wt := s.repo.WorkTree(); wt != "" {
		return wt
	}
	return s.repo.CommonDir()
}

// WorkTree is the repository's working tree ("" when bare).
func (s *Service) WorkTree() string { return s.repo.WorkTree() }

// StateDir is where this working tree's local state outside the cache
// lives (backups of agent settings init changed): inside its git dir,
// never committed.
func (s *Service) StateDir() string { return filepath.Join(s.repo.GitDir(), "synaptic") }

// IsRepository reports whether path is in this repository (any of its
// worktrees).
func (s *Service) IsRepository(path string) bool {
	other, err := gitstore.Open(path)
	if err != nil {
		return false
	}
	defer other.Close()
	a, errA := filepath.EvalSymlinks(other.CommonDir())
	b, errB := filepath.EvalSymlinks(s.repo.CommonDir())
	return errA == nil && errB == nil && a == b
}
