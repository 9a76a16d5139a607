package daemon

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrRunning is returned by Serve when another daemon holds the socket: of
// two daemons racing to start, the second exits cleanly.
var ErrRunning = errors.New("another daemon serves this socket")

// Handler runs one request. The server runs one at a time, so a handler
// may change the process's directory and environment for it.
type Handler func(ctx context.Context, req Request) Response

// Server serves requests on a unix socket until it is idle for Idle, is
// told to stop, or its context ends.
type Server struct {
	Path    string // the socket, in a private directory (SocketDir)
	Version string
	Idle    time.Duration
	Handler Handler
	// Prepare, if set, makes a request's plan (or says why the daemon
	// declines it) as soon as it comes, before it waits for its turn:
	// beside another request's run, so it must be a function of the
	// request alone. Without it the plan runs the request's arguments
	// and reads no input.
	Prepare func(req Request) (plan Plan, declined string)
	// BusyWait bounds how long a request waits for the one before it;
	// past it the client is told to run the command itself (0: 1 s).
	BusyWait time.Duration
	// Background, if set, does one short piece of background work and
	// reports whether more is left. It runs between requests, never
	// beside one (a request waits for at most one piece), once no
	// request has run for Quiet after one (or after the start, with
	// WakeAtStart), until it reports no more.
	Background func(ctx context.Context) (more bool)
	// WakeAtStart runs Background once the daemon has started and had
	// no request for StartQuiet: the command that started it left it
	// work (its repository to warm), which waits for the commands that
	// follow at once (an agent's first calls, a test's).
	WakeAtStart bool
	// Quiet is how long the daemon has had no request before background
	// work starts (0: DefaultQuiet).
	Quiet time.Duration
}

// StartQuiet is how long a daemon WakeAtStart has had no request, since
// its start or the last, before its first background work: longer than
// Quiet, since a piece of that work (loading the embedding model and a
// large vector index: 1-1.6 s at a million entries) makes a request that
// comes meanwhile run in place after BusyWait.
const StartQuiet = time.Second

// DefaultQuiet is Server.Quiet's default. Requests come in bursts (saves
// one after another, a hook and the search an agent makes of it) about
// 10 ms apart, each client's process start: background work begun at
// once after one (embedding the entry a save made, at a million entries
// 5-20 ms) held up the next, for no gain.
const DefaultQuiet = 100 * time.Millisecond

// reply is what the server sends: first the Plan (send the input it
// asks for) or a final Response; after the input, Ready (send go) or a
// final Response; after go, the command's Response.
type reply struct {
	Plan  *Plan `json:"plan,omitempty"`
	Ready bool  `json:"ready,omitempty"`
	Response
}

// proceed is the client's word that it waits for the command to run.
type proceed struct {
	Go bool `json:"go"`
}

// handshakeTimeout bounds each step before a command runs.
const handshakeTimeout = 5 * time.Second

// inputTimeout bounds the wait for the client's standard input, which it
// reads after the plan (from a pipe whose writer may be slow); the
// request holds nothing of the daemon's meanwhile.
const inputTimeout = time.Minute

// Serve takes the socket's lock (ErrRunning if another daemon has it),
// replaces a socket file a killed daemon left, and serves. It returns
// once every connection it accepted is done.
func (s *Server) Serve(ctx context.Context) error {
	if err := checkPrivate(dirOf(s.Path)); err != nil {
		return err
	}
	lock, err := os.OpenFile(s.Path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("daemon lock: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrRunning
		}
		return fmt.Errorf("daemon lock: %w", err)
	}
	// The lock is ours: a socket file there is a dead daemon's.
	if err := os.Remove(s.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("stale socket: %w", err)
	}
	l, err := net.Listen("unix", s.Path)
	if err != nil {
		return fmt.Errorf("daemon socket: %w", err)
	}
	defer os.Remove(s.Path) // before the lock is released (defers run last first)
	if err := os.Chmod(s.Path, 0o600); err != nil {
		l.Close()
		return fmt.Errorf("daemon socket: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	st := &state{sem: make(chan struct{}, 1), wake: make(chan struct{}, 1), last: time.Now(), status: Status{PID: os.Getpid(), Version: s.Version, Socket: s.Path,
		Started: time.Now().UTC().Format(time.RFC3339), IdleExit: s.Idle.String()}}
	var wg sync.WaitGroup
	if s.Background != nil {
		if s.WakeAtStart {
			st.wake <- struct{}{} // room for one, nothing sent yet
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.background(ctx, st, s.WakeAtStart)
		}()
	}
	wg.Add(1)
	go func() { // close the listener when stopped or idle
		defer wg.Done()
		s.watchIdle(ctx, st, stop)
		l.Close()
	}()
	var err2 error
	for {
		conn, err := l.Accept()
		if err != nil {
			if ctx.Err() == nil {
				err2 = fmt.Errorf("daemon accept: %w", err)
			}
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer conn.Close()
			s.handle(ctx, conn, st, stop)
		}()
	}
	stop()
	wg.Wait()
	return err2
}

// background runs s.Background between requests, woken by each request
// (and by the start, when starting), until ctx ends.
func (s *Server) background(ctx context.Context, st *state, starting bool) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-st.wake:
		}
		for more := true; more; {
			quiet := cmp.Or(s.Quiet, DefaultQuiet)
			if starting {
				quiet, starting = max(quiet, StartQuiet), false
			}
			if !st.quiet(ctx, quiet) {
				return
			}
			select {
			case st.sem <- struct{}{}:
			case <-ctx.Done():
				return
			}
			more = s.Background(ctx)
			<-st.sem
			// a request waiting for the semaphore goes first
			select {
			case <-ctx.Done():
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}
}

// state is what the connections share.
type state struct {
	sem     chan struct{} // one command at a time
	wake    chan struct{} // a request ended: background work may follow
	mu      sync.Mutex
	last    time.Time // when the last command ended
	status  Status
	waiting map[string]bool // the notifications waiting for the semaphore (notified)
}

func (st *state) touch(done bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.last = time.Now()
	if done {
		st.status.Requests++
	}
}

// quiet waits until no request has run for d (false: ctx ended first).
func (st *state) quiet(ctx context.Context, d time.Duration) bool {
	for {
		st.mu.Lock()
		left := d - time.Since(st.last)
		st.mu.Unlock()
		switch {
		case len(st.sem) > 0:
			left = d // a request runs: it sets last when it ends
		case left <= 0:
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(left):
		}
	}
}

// idleNotified reports whether no notification waits.
func (st *state) idleNotified() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return len(st.waiting) == 0
}

// watchIdle returns when ctx ends, or stops the server once no command
// has run for s.Idle and none is running.
func (s *Server) watchIdle(ctx context.Context, st *state, stop func()) {
	tick := time.NewTicker(min(max(s.Idle/4, 10*time.Millisecond), time.Second))
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			st.mu.Lock()
			idle := time.Since(st.last)
			st.mu.Unlock()
			if s.Idle > 0 && idle > s.Idle && len(st.sem) == 0 && st.idleNotified() {
				stop()
				return
			}
		}
	}
}

func (s *Server) handle(ctx context.Context, conn net.Conn, st *state, stop func()) {
	if uid, err := peerUID(conn); err != nil || uid != os.Getuid() {
		return // only this user's processes are served
	}
	conn.SetDeadline(time.Now().Add(handshakeTimeout))
	dec, enc := json.NewDecoder(conn), json.NewEncoder(conn)
	var req Request
	if err := dec.Decode(&req); err != nil {
		return
	}
	switch req.Control {
	case "":
	case "status":
		st.mu.Lock()
		status := st.status
		st.mu.Unlock()
		enc.Encode(reply{Response: Response{Status: &status}})
		return
	case "stop":
		enc.Encode(reply{Response: Response{Declined: "stopping"}})
		stop()
		return
	default:
		enc.Encode(reply{Response: Response{Declined: "unknown control " + req.Control}})
		return
	}
	plan := Plan{Args: req.Args}
	if s.Prepare != nil {
		var declined string
		if plan, declined = s.Prepare(req); declined != "" {
			enc.Encode(reply{Response: Response{Declined: declined}})
			return
		}
	}
	if enc.Encode(reply{Plan: &plan}) != nil {
		return
	}
	req.Args = plan.Args
	if plan.Stdin > 0 { // else the client sends none
		conn.SetDeadline(time.Now().Add(inputTimeout))
		var in input
		if dec.Decode(&in) != nil || int64(len(in.Stdin)) > plan.Stdin {
			return
		}
		req.Stdin = in.Stdin
		conn.SetDeadline(time.Now().Add(handshakeTimeout))
	}
	if req.NoWait {
		s.notified(ctx, conn, dec, enc, st, req)
		return
	}
	wait := s.BusyWait
	if wait <= 0 {
		wait = time.Second
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case st.sem <- struct{}{}:
	case <-timer.C:
		enc.Encode(reply{Response: Response{Declined: "busy"}})
		return
	case <-ctx.Done():
		enc.Encode(reply{Response: Response{Declined: "stopping"}})
		return
	}
	defer func() { <-st.sem }()
	// Run only once the client has said it waits: a client that gave up
	// runs the command itself, and it must not run twice.
	var p proceed
	if enc.Encode(reply{Ready: true}) != nil || dec.Decode(&p) != nil || !p.Go {
		return
	}
	conn.SetDeadline(time.Time{})
	enc.Encode(reply{Response: s.run(ctx, st, req)})
}

// run runs req, which holds the semaphore, and wakes the background work
// that may follow it.
func (s *Server) run(ctx context.Context, st *state, req Request) Response {
	st.touch(false)
	resp := s.Handler(ctx, req)
	st.touch(resp.Declined == "")
	select {
	case st.wake <- struct{}{}:
	default:
	}
	return resp
}

// notified takes a notification (Notify, a git hook's hand-off): the
// client is told at once that it will run, and it runs once the daemon is
// free, its output dropped. One notification of a command in a directory
// waits at a time, and maxWaiting in all: one that finds its like waiting
// is declined, since the one waiting does its work too (a hook catches up
// on every commit since the last it indexed).
func (s *Server) notified(ctx context.Context, conn net.Conn, dec *json.Decoder, enc *json.Encoder, st *state, req Request) {
	key := req.Dir + "\x00" + strings.Join(req.Args, "\x00")
	if why := st.enqueue(key); why != "" {
		enc.Encode(reply{Response: Response{Declined: why}})
		return
	}
	waiting := true
	defer func() {
		if waiting {
			st.dequeue(key)
		}
	}()
	var p proceed
	if enc.Encode(reply{Ready: true}) != nil || dec.Decode(&p) != nil || !p.Go {
		return
	}
	conn.Close() // the client is gone: it waits for nothing
	select {
	case st.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	defer func() { <-st.sem }()
	st.dequeue(key) // a notification from now on may find work this one will not see
	waiting = false
	s.run(ctx, st, req)
}

// maxWaiting is how many notifications may wait for the daemon at once.
const maxWaiting = 16

// enqueue records a notification keyed key as waiting, or says why it
// may not wait.
func (st *state) enqueue(key string) (declined string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	switch {
	case st.waiting[key]:
		return "one like it is waiting"
	case len(st.waiting) >= maxWaiting:
		return "busy"
	}
	if st.waiting == nil {
		st.waiting = map[string]bool{}
	}
	st.waiting[key] = true
	return ""
}

// dequeue records that the notification keyed key waits no more.
func (st *state) dequeue(key string) {
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.waiting, key)
}
