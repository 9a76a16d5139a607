package app

import (
	"context"
	"errors"
	"io"
	"os"
	"time"
)

// ErrClosed is returned by a Session used after Close.
var ErrClosed = errors.New("the memory session is closed")

// Session is a repository held open for the many requests of a
// long-lived process: the MCP server, the web view and the warm process.
// It keeps what is costly to build between requests (the open cache, the
// vector index in memory, the embedding model, other projects opened for
// cross-project search) and nothing a request could see stale: before
// each request the cache is brought up to the refs, which other processes
// and git fetch move meanwhile.
//
// Concurrency: a Session is safe for concurrent use. Do runs one request
// at a time (the Service below is not safe for concurrent use), in the
// order the requests take the lock; a request waiting for the lock gives
// up when its context ends. The Service handed to a request is valid only
// while the request runs: it must not be kept, closed, or used by a
// goroutine that outlives the request.
type Session struct {
	turn chan struct{} // holds a token while a request runs
	svc  *Service
	def  Per // the Options' per-request values
}

// Per holds what one request may set differently from the Session's
// Options: where its warnings and progress go, the time its relative
// dates are read against, and the agent session and agent its saves carry.
type Per struct {
	Warn           io.Writer
	Progress       func(done, total int)
	Judging        func(done, total int)
	AsOf           time.Time
	Session, Agent string
	// BusyTimeout is Options.BusyTimeout: git and agent hooks wait less
	// for another process's cache write than searches do.
	BusyTimeout time.Duration
}

// OpenSession opens the repository containing dir for a long-lived
// process.
func OpenSession(dir string, opts Options) (*Session, error) {
	svc, err := Open(dir, opts)
	if err != nil {
		return nil, err
	}
	svc.longLived, svc.conn.hold = true, true
	return &Session{turn: make(chan struct{}, 1), svc: svc, def: opts.Per()}, nil
}

// Do runs f with the Session's Service, alone and on fresh refs, with the
// per-request values of the Session's Options.
func (s *Session) Do(ctx context.Context, f func(*Service) error) error {
	return s.DoAs(ctx, s.def, f)
}

// DoAs is Do with the per-request values of per.
func (s *Session) DoAs(ctx context.Context, per Per, f func(*Service) error) error {
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-s.turn }()
	if s.svc == nil {
		return ErrClosed
	}
	s.svc.setPer(per)
	defer s.svc.setPer(s.def)
	s.svc.stale()
	s.svc.repo.RecheckConfig() // git config may have changed since the last request
	s.svc.forgetLentModel()
	return f(s.svc)
}

// Close waits for the running request and releases the repository, the
// cache and what the Session loaded.
func (s *Session) Close() error {
	s.turn <- struct{}{}
	defer func() { <-s.turn }()
	if s.svc == nil {
		return nil
	}
	err := s.svc.Close()
	s.svc = nil
	return err
}

// forgetLentModel drops a model that Options.LoadEmbedder lent (the warm
// process keeps it loaded): a request then starts as the command run in
// place would, with the model at hand but not loaded, so that what it
// does only where the model is loaded anyway (a session start detecting
// directives by meaning) is the same either way. A model the Service
// loaded itself stays, as in the MCP server.
func (s *core) forgetLentModel() {
	if s.model.lend == nil || !s.model.forgetLent() {
		return
	}
	for _, o := range s.others {
		o.model.forgetLent() // this one's, shared
	}
}

// Per is the per-request values of o.
func (o Options) Per() Per {
	return Per{Warn: o.Warn, Progress: o.Progress, Judging: o.Judging, AsOf: o.AsOf, Session: o.Session, Agent: o.Agent, BusyTimeout: o.BusyTimeout}
}

// setPer makes per the Service's per-request values.
func (s *core) setPer(per Per) {
	if per.Warn == nil {
		per.Warn = os.Stderr
	}
	s.per = per
	s.conn.busy = per.BusyTimeout // (applied as the cache is next asked for: openCache)
	for _, o := range s.others {  // opened with this one's settings (projects.go)
		o.per.AsOf = per.AsOf
	}
}

// DaemonKey is the git configuration that turns the warm process off
// for a repository (or, set globally, for the user).
const DaemonKey = "synaptic.daemon"

// DaemonOff reports whether git config synaptic.daemon is false for this
// repository. It is read with the rest of the synaptic.* section, so the
// warm process asks it of each request without a git process of its own.
func (s *Service) DaemonOff(ctx context.Context) bool {
	on, set, err := s.repo.ConfigBool(ctx, DaemonKey)
	return err == nil && set && !on
}
