package app

// sessionID is the session a save carries when its request names none:
// the configured one (Options.Session), else, for servers that follow the
// agent (Options.FollowAgentSession), the session the agent's hooks
// recorded for this worktree, else Options.DefaultSession.
func (s *core) sessionID() string {
	if s.per.Session != "" {
		return s.per.Session
	}
	if s.followAgent {
		if id := s.capture.Session(); id != "" {
			return id
		}
	}
	return s.defaultSession
}
