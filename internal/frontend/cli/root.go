// Package cli is git-synaptic's command line: one cobra command per verb,
// each an options struct filled from flags and arguments and a run
// function over app.Service, joined by env.run so that tests can check
// what the flags parse to without running anything. Exit codes are
// decided in one place (errors.go).
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
)

// IO is where a command reads and writes.
type IO struct {
	In       io.Reader
	Out, Err io.Writer
	// TTY reports whether Out is a terminal (pager, colour).
	TTY bool
}

// env carries what every command needs.
type env struct {
	ctx  context.Context
	io   IO
	dir  string
	busy time.Duration // cache lock wait; short for git hooks
	asOf time.Time     // search --as-of
	// parsed, when set (tests of flag parsing), receives each command's
	// filled-in options in place of running the command.
	parsed func(opts any)
	models *app.WarmModels  // in the daemon: the models it keeps loaded
	pool   *sessionPool     // in the daemon: the repositories it keeps open
	now    func() time.Time // the clock; nil: the system's (tests fix it)
}

// clock is the time now, as the command reads it.
func (e *env) clock() time.Time {
	if e.now != nil {
		return e.now()
	}
	return time.Now()
}

// run runs a command whose flags and arguments are in opts: work, or,
// under a flag-parsing test, nothing but handing opts to e.parsed. It is
// the one seam cli/cli gives each NewCmdX as runF.
func (e *env) run(opts any, work func() error) error {
	if e.parsed != nil {
		e.parsed(opts)
		return nil
	}
	return work()
}

func contextOf(e *env) context.Context { return e.ctx }

// open opens the repository of the current directory (or -C); in the
// daemon, not one that turns the daemon off.
func (e *env) open() (*app.Service, error) {
	s, err := e.openAt(e.dir)
	if err == nil && e.pool != nil && e.pool.refuses(e.ctx, s) {
		s.Close()
		return nil, errDaemonOff
	}
	return s, err
}

// openAt opens the repository containing dir.
func (e *env) openAt(dir string) (*app.Service, error) { return app.Open(dir, e.options()) }

// options are the Service options of this command.
func (e *env) options() app.Options {
	opts := config.FromEnv(app.Options{Warn: e.io.Err, BusyTimeout: e.busy, Progress: progress(e, "indexing memory"), Judging: progress(e, "judging decay"), AsOf: e.asOf, Now: e.now})
	if f := terminalErr(e); f != nil {
		opts.Transfers = f
	}
	if e.models != nil {
		opts.LoadEmbedder = e.models.Load
	}
	return opts
}

// Main runs the CLI with os.Args and returns the exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer exitAfterSignal(signalGrace)()
	defer config.CPUProfile()()
	return Run(ctx, os.Args[1:], IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, TTY: isTerminal(os.Stdout)})
}

// signalGrace is how long a command may take to stop after SIGTERM or
// an interrupt cancels its context. Work that cannot see the context (a
// blocking read) must not keep the process alive: memory writes are
// atomic ref updates, so exiting mid-way is as safe as kill -9.
const signalGrace = 2 * time.Second

// exitAfterSignal ends the process (status 143, as a shell reports
// SIGTERM) signalGrace after the first signal; the returned function
// stops watching.
func exitAfterSignal(grace time.Duration) func() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sig:
		case <-done:
			return
		}
		select {
		case <-time.After(grace):
			fmt.Fprintln(os.Stderr, "git-synaptic: stopped by a signal")
			os.Exit(143)
		case <-done:
		}
	}()
	return func() { signal.Stop(sig); close(done) }
}

// Run runs the CLI with args and returns the exit code.
func Run(ctx context.Context, args []string, stdio IO) int { return run(ctx, args, stdio, nil) }

// run is Run in the warm process, with the repositories and models it
// keeps (nil: open and load what is needed).
func run(ctx context.Context, args []string, stdio IO, pool *sessionPool) int {
	e := &env{ctx: ctx, io: stdio, dir: "."}
	if pool != nil {
		e.pool, e.models = pool, pool.models
	}
	return e.execute(args)
}

// execute runs the command line args in e, says what failed on its
// standard error, and returns the exit code.
func (e *env) execute(args []string) int {
	e.io.Out, e.io.Err = visible{e.io.Out}, visible{e.io.Err}
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.io.In)
	root.SetOut(e.io.Out)
	root.SetErr(e.io.Err)
	err := root.ExecuteContext(e.ctx)
	if err != nil {
		msg := err.Error()
		if !strings.HasPrefix(msg, "git-synaptic:") {
			msg = "git-synaptic: " + msg
		}
		fmt.Fprintln(e.io.Err, msg)
	}
	return ExitCode(err)
}

// Root returns the command tree, for tools that document it (man pages).
func Root() *cobra.Command {
	return newRoot(&env{ctx: context.Background(), io: IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr}, dir: "."})
}

func newRoot(e *env) *cobra.Command {
	root := &cobra.Command{
		Use:   "git-synaptic",
		Short: "Shared, searchable project memory for coding agents, stored in git refs",
		Long: `git synaptic keeps decisions, insights, issues, handoffs and rules as memory
inside the git repository itself (under refs/synaptic/* and refs/notes/synaptic,
never in the working tree). Memory travels with git push and git fetch, merges
without conflicts, and is indexed in a disposable local cache for search.`,
		Example: `  git synaptic init
  git synaptic save "we chose postgres for billing: we need transactions" --type decision --tag db
  git synaptic search postgres
  git synaptic log --oneline -n 20
  git synaptic sync`,
		Version:       config.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.PersistentFlags().StringVarP(&e.dir, "directory", "C", ".", "run as if started in `dir`")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return usageError{fmt.Errorf("%w\nSee 'git synaptic %s --help'.", err, c.Name())}
	})
	root.AddCommand(
		newInit(e), newSave(e), newLog(e), newList(e), newShow(e), newSearch(e),
		newPin(e, true), newPin(e, false), newArchive(e, true), newArchive(e, false),
		newEdit(e), newStatus(e), newRepair(e), newNote(e), newSync(e), newReindex(e), newImport(e), newExport(e),
		newIndex(e), newCochanges(e), newSuggest(e), newHooks(e), newHook(e), newMCP(e), newMaintain(e), newFeedback(e, true), newFeedback(e, false),
		newModel(e), newEmbed(e), newPatterns(e), newConsolidate(e), newRules(e), newDelete(e), newProjects(e),
		newSubscribe(e), newUnsubscribe(e), newSubscriptions(e), newWeb(e), newDaemon(e), newVerify(e),
	)
	return root
}

// exactArgs, minArgs and rangeArgs wrap cobra's validators so that their
// errors map to the usage exit code.
func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }
func minArgs(n int) cobra.PositionalArgs   { return usageArgs(cobra.MinimumNArgs(n)) }
func rangeArgs(a, b int) cobra.PositionalArgs {
	return usageArgs(cobra.RangeArgs(a, b))
}

func usageArgs(v cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, args []string) error {
		if err := v(c, args); err != nil {
			return usageError{fmt.Errorf("%s: %w\nSee 'git synaptic %s --help'.", c.Name(), err, c.Name())}
		}
		return nil
	}
}

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// withService opens the repository, runs f and closes it; in the warm
// process it runs f in the repository's pooled Session instead.
func (e *env) withService(f func(*app.Service) error) error {
	if e.pool != nil {
		return e.pool.do(e, f)
	}
	s, err := e.open()
	if err != nil {
		return err
	}
	defer s.Close()
	return f(s)
}
