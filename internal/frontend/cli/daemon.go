package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/daemon"
	"github.com/git-synaptic/git-synaptic/internal/frontend/agenthook"
	"github.com/git-synaptic/git-synaptic/internal/frontend/forward"
	"github.com/git-synaptic/git-synaptic/memory"
)

// The warm process. One daemon per user and binary serves every
// repository: what it keeps warm (ONNX Runtime and the model) is the
// user's, not a repository's, and one process holds it once however many
// repositories the user works in. It keeps the repositories requests
// opened (sessionPool) with what their caches hold in memory, and each
// request sees the refs as they are when it starts, so that results are
// those of the command run in place.

// DefaultDaemonIdle is how long the daemon waits for a request before it
// exits (git config synaptic.daemonIdle).
const DefaultDaemonIdle = 15 * time.Minute

// forwardable reports whether a command line goes to the daemon (of
// forward.Candidate's, those it takes): searches and the agent hooks,
// which may load the model on every prompt (and the tool hook, which
// does not, but runs on every tool call: 13.5 ms in place against 6.4
// through the daemon, at 10k entries); and saves, but for those that
// push (saveLine): the daemon holds the repository open (its cache, the
// git cat-file process that reads packed trees), which a save from the
// command line otherwise opens each time. And the git hooks that hand
// their work over (forward.GitHandoff).
func forwardable(args []string) bool {
	switch {
	case forward.GitHandoff(args):
		return true
	case !forward.Candidate(args):
		return false
	case args[0] == "save":
		ok, _ := saveLine(args[1:])
		return ok
	case args[0] == "hook":
		return agenthook.Names[args[1]]
	}
	return true // search
}

// prepare is the daemon's plan for a request (daemon.Server.Prepare), or
// why it declines it. A save is planned under a new id (saveIDFlag),
// which saves it once when the daemon dies after saving and the client
// runs it again in place. Standard input is read for the agent hooks and
// a save whose content comes from it, unless it is a terminal (a save
// then runs in place, where its content is typed or its usage error
// said). It runs beside other requests: it reads nothing but req.
func prepare(req daemon.Request) (daemon.Plan, string) {
	if !forwardable(req.Args) {
		return daemon.Plan{}, "not a command the daemon runs"
	}
	args := req.Args
	plan := daemon.Plan{Args: args}
	readIn := args[0] == "hook" && !forward.GitHandoff(args)
	if args[0] == "save" {
		_, readIn = saveLine(args[1:])
		if readIn && req.StdinTTY {
			return daemon.Plan{}, "the content is typed on a terminal"
		}
		// the flag first: after a "--" it would be content
		plan.Args = append([]string{args[0], "--" + saveIDFlag + "=" + memory.NewID()}, args[1:]...)
	}
	if readIn && !req.StdinTTY {
		plan.Stdin = agenthook.MaxInput
		if args[0] == "save" {
			plan.Stdin = memory.MaxContentBytes + 1 // save refuses more, as in place
		}
	}
	return plan, ""
}

// serveRequest runs one request as the client would have: in its
// directory, with its environment and standard input, with the warm
// model. The daemon runs one at a time, so the process's directory and
// environment are the request's while it runs.
func serveRequest(ctx context.Context, pool *sessionPool, jobs *backgroundJobs, req daemon.Request) daemon.Response {
	if !forwardable(req.Args) {
		return daemon.Response{Declined: "not a command the daemon runs"}
	}
	var resp daemon.Response
	pool.declined = false
	err := asCaller(req.Dir, req.Env, func() {
		var out, errb bytes.Buffer
		code := run(ctx, req.Args, IO{In: bytes.NewReader(req.Stdin), Out: &out, Err: &errb, TTY: req.TTY}, pool)
		resp = daemon.Response{Code: code, Stdout: out.Bytes(), Stderr: errb.Bytes()}
	})
	switch {
	case err != nil:
		return daemon.Response{Declined: err.Error()}
	case pool.declined:
		return daemon.Response{Declined: errDaemonOff.Error()}
	}
	jobs.add(req.Dir, req.Env) // entries a search left unembedded: between requests
	return resp
}

// collectLessOften lets the daemon's heap grow to five times what is live
// (GOGC=400, bounded at 1 GiB) before the garbage collector runs: it
// answers hooks while the agent waits, and a collection during a request
// competes with the query's embedding for the cores. At 10k entries a
// warm prompt hook's work went from 8.6 to 7.8 ms (medians of 35). GOGC
// and GOMEMLIMIT in the environment win.
func collectLessOften() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(400)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(1 << 30)
	}
}

// socketPath is the socket of this binary's daemon.
func socketPath() (string, error) {
	dir, err := daemon.SocketDir()
	if err != nil {
		return "", err
	}
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	key, err := daemon.Key(self)
	if err != nil {
		return "", err
	}
	return daemon.SocketPath(dir, key), nil
}

// asCaller runs f in dir with env as the whole environment, then puts the
// daemon's own environment back and leaves dir, so that the daemon holds
// no user's directory while it waits. Only one runs at a time.
func asCaller(dir string, env []string, f func()) error {
	own := os.Environ()
	defer setEnv(own)
	defer os.Chdir("/")
	if err := os.Chdir(dir); err != nil {
		return err
	}
	setEnv(env)
	f()
	return nil
}

// setEnv makes env the process's whole environment.
func setEnv(env []string) {
	os.Clearenv()
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			os.Setenv(k, v)
		}
	}
}

// backgroundJobs are the repositories whose entries the daemon embeds
// between requests, with the environment of the request that named them.
type backgroundJobs struct {
	dirs []string
	env  map[string][]string
}

// add queues dir (again: with the newer environment).
func (j *backgroundJobs) add(dir string, env []string) {
	if j.env == nil {
		j.env = map[string][]string{}
	}
	if _, ok := j.env[dir]; !ok {
		j.dirs = append(j.dirs, dir)
	}
	j.env[dir] = env
}

// backgroundPiece is how many entries the daemon embeds between requests
// at a time (about 150 ms with ONNX Runtime on one core), and treePiece
// how many of memory's trees it reads ahead (about 2 ms each for the
// directories of a million entries): a request waits for one piece at
// most.
const backgroundPiece, treePiece = 64, 32

// step embeds a piece of the first queued repository's pending entries,
// as a command run there would (its directory and environment), or, once
// none is left, brings the vector index in memory up to date for the next
// search (the first time, 0.5-1 s at a million entries: the one piece
// longer than the rest) and reads a piece of its memory's trees ahead for
// the next save; it reports whether any work is left.
func (j *backgroundJobs) step(ctx context.Context, pool *sessionPool) bool {
	if len(j.dirs) == 0 {
		return false
	}
	dir := j.dirs[0]
	left, more := 0, false
	asCaller(dir, j.env[dir], func() {
		// in the Session the agent hooks there use (opening the
		// repository afresh ran git after every request), warnings dropped
		e := &env{ctx: ctx, io: IO{Out: io.Discard, Err: io.Discard}, dir: ".", busy: hookBusy, models: pool.models, pool: pool}
		e.withService(func(s *app.Service) error {
			left, _ = s.Recall().EmbedSome(ctx, backgroundPiece)
			if left == 0 {
				_ = s.Recall().LoadIndex(ctx) // a search reports what fails here
				more = s.Memory().ReadTrees(treePiece)
			}
			return nil
		})
	})
	if left == 0 && !more {
		j.dirs = j.dirs[1:]
		delete(j.env, dir)
	}
	return len(j.dirs) > 0
}

type daemonOptions struct {
	action string
	idle   time.Duration
	json   bool
}

func newDaemon(e *env) *cobra.Command {
	o := &daemonOptions{}
	c := &cobra.Command{
		Use:   "daemon (status|stop|run)",
		Short: "The warm process that keeps the embedding model loaded for hooks, searches and saves",
		Long: `Agent hooks (session-start, prompt, ...), searches and saves ask a warm
process first, which keeps ONNX Runtime and the embedding model loaded, so
that a prompt does not pay for loading the model each time, and the
repositories it served open, so that a save does not open one each time
(save --to, which pushes, runs in place). The first such command
starts it (detached) and runs in place; once it has had a second without
a request, the warm process loads the model and the vector index of that
command's repository, so that an agent's first prompt after the session
start that started it finds them loaded. It serves every repository of
this user and binary on a unix socket in a private directory
($XDG_RUNTIME_DIR/git-synaptic, else git-synaptic-UID in the temporary
directory, mode 0700) and exits after 15 idle minutes (git config
synaptic.daemonIdle). When it is absent, busy, of another version, or
dies, commands do the work themselves; the results are the same. git
config synaptic.daemon false (or GIT_SYNAPTIC_DAEMON=off) turns it off.
  status   whether it runs, its pid, version, socket and requests served
  stop     stop it
  run      serve in the foreground (what the first command starts)`,
		Example: `  git synaptic daemon status
  git synaptic daemon stop
  git config --global synaptic.daemon false`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.action = args[0]
			return e.run(o, func() error { return runDaemon(e, o) })
		},
	}
	c.Flags().DurationVar(&o.idle, "idle", DefaultDaemonIdle, "run: exit after this long without a request")
	c.Flags().BoolVar(&o.json, "json", false, "status: print JSON")
	return c
}

func runDaemon(e *env, o *daemonOptions) error {
	path, err := socketPath()
	if err != nil {
		return err
	}
	switch o.action {
	case "run":
		// the command that started it ran in place in its repository, and
		// its next (an agent's first prompt) comes here: the model and the
		// vector index are read for it meanwhile (backgroundJobs)
		models, jobs := &app.WarmModels{}, &backgroundJobs{}
		if dir, err := os.Getwd(); err == nil {
			jobs.add(dir, os.Environ())
		}
		os.Chdir("/") // hold no user's directory while waiting
		collectLessOften()
		pool := &sessionPool{models: models}
		defer models.Close()
		defer pool.close() // before the models it uses
		// Handler and Background never run at once (daemon.Server), so
		// they share jobs, the directory and the environment unlocked.
		srv := &daemon.Server{Path: path, Version: config.Version, Idle: o.idle, Prepare: prepare, WakeAtStart: true,
			Handler: func(ctx context.Context, req daemon.Request) daemon.Response {
				return serveRequest(ctx, pool, jobs, req)
			},
			Background: func(ctx context.Context) bool { return jobs.step(ctx, pool) }}
		if err := srv.Serve(contextOf(e)); err != nil && !errors.Is(err, daemon.ErrRunning) {
			return err
		}
		return nil // a daemon racing another leaves it the socket
	case "status", "stop":
		resp, err := daemon.Call(contextOf(e), path, daemon.Request{Control: o.action}, nil)
		if errors.Is(err, daemon.ErrUnavailable) {
			if o.json {
				return writeJSON(e.io.Out, map[string]any{"running": false, "socket": path})
			}
			fmt.Fprintf(e.io.Out, "no daemon runs (socket %s)\n", path)
			return nil
		}
		if err != nil {
			return err
		}
		if o.action == "stop" {
			fmt.Fprintln(e.io.Out, "daemon stopped")
			return nil
		}
		st := resp.Status
		if st == nil {
			return fmt.Errorf("the daemon gave no status")
		}
		if o.json {
			return writeJSON(e.io.Out, map[string]any{"running": true, "status": st})
		}
		fmt.Fprintf(e.io.Out, "daemon pid %d, version %s, since %s, %d requests served, exits after %s idle\nsocket %s\n", st.PID, st.Version, st.Started, st.Requests, st.IdleExit, st.Socket)
		return nil
	}
	return usagef("daemon: unknown action %q (want status, stop or run)", o.action)
}
