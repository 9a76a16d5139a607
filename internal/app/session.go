package app

import (
	"path/filepath"
	"strings"

	"github.com/git-synaptic/git-synaptic/internal/atomicfile"
	"github.com/git-synaptic/git-synaptic/notes"

	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// agentSessionFile is where the agent hooks record the agent's current
// session for this worktree. It sits in the worktree's own git dir, since
// two worktrees can host two agents.
func (s *core) agentSessionFile() string {
	return filepath.Join(s.repo.GitDir(), "synaptic-agent-session")
}

// recordAgentSession notes id as the agent session of this worktree, so
// that a server the agent started (which is told no session id) saves
// into the same session as the hooks. It writes only when the id changes.
func (s *core) recordAgentSession(id string) {
	id = strings.TrimSpace(id)
	if id == "" || len(id) > 200 || !notes.ValidName(id) || s.readAgentSession() == id {
		return
	}
	if err := atomicfile.Write(s.agentSessionFile(), []byte(id+"\n"), 0o600); err != nil {
		s.warnf("cannot record the agent session: %v", err)
	}
}

// readAgentSession is the session the agent hooks last recorded for this
// worktree, or "".
func (s *core) readAgentSession() string {
	b, err := regular.ReadFile(s.agentSessionFile(), 256)
	id := strings.TrimSpace(string(b))
	if err != nil || !notes.ValidName(id) {
		return ""
	}
	return id
}

// sessionID is the session a save carries when its request names none:
// the configured one (Options.Session), else, for servers that follow the
// agent (Options.FollowAgentSession), the session the agent's hooks
// recorded for this worktree, else Options.DefaultSession.
func (s *core) sessionID() string {
	if s.session != "" {
		return s.session
	}
	if s.followAgent {
		if id := s.readAgentSession(); id != "" {
			return id
		}
	}
	return s.defaultSession
}
