package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/agentsetup"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/frontend/agenthook"
)

// progress draws "label: done/total" on stderr when it is a terminal.
func progress(e *env, label string) func(done, total int) {
	f := terminalErr(e)
	if f == nil {
		return nil
	}
	last := time.Time{}
	return func(done, total int) {
		if done < total && time.Since(last) < 100*time.Millisecond {
			return
		}
		last = time.Now()
		pct := 100
		if total > 0 {
			pct = done * 100 / total
		}
		fmt.Fprintf(f, "\r%s: %d/%d (%d%%)", label, done, total, pct)
		if done >= total {
			fmt.Fprintln(f)
		}
	}
}

// terminalErr is the command's standard error when it is a terminal,
// unwrapped: git's progress is shown as git draws it. Else nil.
func terminalErr(e *env) *os.File {
	if f, ok := unwrapped(e.io.Err).(*os.File); ok && isTerminal(f) {
		return f
	}
	return nil
}

type indexOptions struct {
	all, json     bool
	branch, since string
}

func newIndex(e *env) *cobra.Command {
	o := &indexOptions{}
	c := &cobra.Command{
		Use:   "index",
		Short: "Index commits of the history (searchable, and mined for co-changes)",
		Long: `Index commits (message, author, date, branch, files) as searchable git_commit
entries in the cache, and their files for co-change suggestions. The history
stays the truth: nothing is written to the memory refs. Only names and blob
ids are read, never file contents, except where git's rename detection
compares a commit's deleted and added files; where those contents are
missing (a partial clone), renames are followed only where the content did
not change, and it says so.

Run it once: after that every git synaptic command indexes the commits made,
merged or checked out since (up to 1000 at a time), so no hook slows down
git commit. Already indexed commits are skipped.

It also tunes the co-change ranking (cochanges, suggest) to this repository:
it replays its last 200 commits, each predicted from the commits before it
only, under a few settings (whether files of the same directory are favoured,
how fast old commits fade), and keeps the best when it beats the defaults.
It tunes again when the history has grown by a quarter; 'git synaptic
status' shows the result.`,
		Example: `  git synaptic index              # the current branch's history
  git synaptic index --all        # every local branch
  git synaptic index --since 90d
  git synaptic search --type git_commit "flaky test"`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runIndex(e, o) })
		},
	}
	c.Flags().BoolVar(&o.all, "all", false, "index every local branch")
	c.Flags().StringVar(&o.branch, "branch", "", "index this `branch` (default: the current one)")
	c.Flags().StringVar(&o.since, "since", "", "only commits after `time` (2025-01-31, 90d)")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func runIndex(e *env, o *indexOptions) error {
	opt := app.IndexOptions{All: o.all, Branch: o.branch, Progress: progress(e, "indexing commits"), Tune: true}
	if o.since != "" {
		t, err := app.ParseTime(o.since, e.clock())
		if err != nil {
			return usageError{err}
		}
		opt.Since = t
	}
	return e.withService(func(s *app.Service) error {
		rep, err := s.Code().Index(contextOf(e), opt)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, rep)
		}
		fmt.Fprintf(e.io.Out, "indexed %d new commits (%d walked) of %s in %s\n", rep.Indexed, rep.Seen, strings.Join(rep.Revs, ", "), rep.Elapsed.Round(time.Millisecond))
		if rep.ExactRenamesOnly > 0 {
			fmt.Fprintf(e.io.Out, "note: file contents are missing here (a partial clone?); renames in %d commits were followed only where the content did not change\n", rep.ExactRenamesOnly)
		}
		if rep.Tuning != nil {
			fmt.Fprintf(e.io.Out, "co-change ranking tuned on this repository's last %d commits: %s\n", rep.Tuning.Validation, tuningSummary(*rep.Tuning))
		}
		return nil
	})
}

func printSuggestions(w io.Writer, list []cochange.Suggestion, m cochange.Method, now time.Time) {
	fmt.Fprintf(w, "%-6s  %-6s  %-6s  %-10s  %s\n", "SCORE", "COUNT", "CONF", "LAST SEEN", "FILE")
	for _, s := range list {
		if s.Count == 0 { // no shared commit: a stem twin or a recent neighbour
			fmt.Fprintf(w, "%-6s  %-6s  %6s  %-10s  %s  (no shared commit: same name or directory)\n", "-", "-", "-", app.Age(now, s.Last), s.File)
			continue
		}
		fmt.Fprintf(w, "%-6.3g  %-6d  %5.0f%%  %-10s  %s\n", s.Score, s.Count, 100*s.Confidence, app.Age(now, s.Last), s.File)
	}
	if len(list) > 1 {
		fmt.Fprintf(w, "ordered by SCORE: %s\n", scoreMeaning[m])
	}
}

// scoreMeaning says what orders each recommender's rows.
var scoreMeaning = map[cochange.Method]string{
	cochange.Weighted: "shared commits, newer and smaller commits weighing more (so a few recent ones can beat many old ones)",
	cochange.Rose:     "confidence (CONF), ties by COUNT",
	cochange.Count:    "shared commits (COUNT)",
	cochange.Degree:   "shared commits over the average of the two files' commits (code-maat's degree)",
}

// tuningSummary says what self-tuning chose and by how much it beat the
// defaults.
func tuningSummary(t cochange.Tuning) string {
	var chosen, def cochange.Score
	for i, sc := range t.Scores {
		if sc.Options == t.Chosen {
			chosen = sc
		}
		if i == 0 {
			def = sc
		}
	}
	return fmt.Sprintf("%s (MRR@10 %.3f, hit@3 %.3f; defaults %.3f, %.3f)", t.Chosen, chosen.MRR, chosen.Hit3, def.MRR, def.Hit3)
}

// cochangeFlags are what cochanges and suggest both take: the
// recommender, how many files, JSON.
type cochangeFlags struct {
	method   string
	maxCount int
	json     bool
}

func (f *cochangeFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.method, "method", string(cochange.Weighted), "recommender: weighted, rose, count, degree")
	c.Flags().IntVarP(&f.maxCount, "max-count", "n", 10, "show at most `n` files")
	c.Flags().BoolVar(&f.json, "json", false, "print JSON")
}

// check checks --max-count and returns the --method.
func (f *cochangeFlags) check() (cochange.Method, error) {
	if f.maxCount < 1 {
		return "", usagef("--max-count %d: give 1 or more", f.maxCount)
	}
	m := cochange.Method(f.method)
	if !slices.Contains(cochange.Methods, m) {
		return "", usagef("unknown --method %q (want one of weighted, rose, count, degree)", f.method)
	}
	return m, nil
}

type cochangesOptions struct {
	cochangeFlags
	args []string
}

func newCochanges(e *env) *cobra.Command {
	o := &cochangesOptions{}
	c := &cobra.Command{
		Use:   "cochanges FILE",
		Short: "Files that usually change together with FILE",
		Long: fmt.Sprintf(`List the files that changed in the same commits as FILE, ranked as suggest
ranks them (--method to compare recommenders), with how often (count), the
share of FILE's commits that also touched them (confidence) and when they
last changed together. Commits touching more than %d files are ignored for
pairs (sweeping changes couple everything); merge commits add nothing of
their own; renames are followed, so history survives a move; files deleted
since are never listed. New commits of the current branch are indexed first.

The table's SCORE is what orders it (the weighted recommender's: shared
commits, newer and smaller ones weighing more). FILE is a path as git takes
it: relative to the current directory, absolute, or from the top with :/; a
path from the top works in a subdirectory too.`, cochange.DefaultMaxFiles),
		Example: `  git synaptic cochanges internal/app/sync.go
  cd internal/app && git synaptic cochanges sync.go     # the same file
  git synaptic cochanges :/go.mod -n 5 --json
  git synaptic cochanges tty.c --method count`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runCochanges(e, o) })
		},
	}
	o.cochangeFlags.add(c)
	return c
}

func runCochanges(e *env, o *cochangesOptions) error {
	m, err := o.check()
	if err != nil {
		return err
	}
	return e.withService(func(s *app.Service) error {
		files, err := repoPaths(s.Root(), e.dir, o.args)
		if err != nil {
			return err
		}
		file := files[0]
		list, commits, err := s.Code().Cochanges(contextOf(e), file, m, o.maxCount, progress(e, "indexing commits"))
		if err != nil {
			return err
		}
		if o.json {
			list = nonNil(list)
			return writeJSON(e.io.Out, map[string]any{"file": file, "commits": commits, "cochanges": list})
		}
		if commits == 0 {
			why, err := s.Code().NoCochanges(contextOf(e), file)
			if err != nil {
				return err
			}
			fmt.Fprintln(e.io.Out, why)
			return nil
		}
		fmt.Fprintf(e.io.Out, "%s changed in %s; files changed with it:\n", file, app.Plural(commits, "commit"))
		printSuggestions(e.io.Out, list, m, e.clock())
		return nil
	})
}

type suggestOptions struct {
	cochangeFlags
	staged bool
	files  []string
}

func newSuggest(e *env) *cobra.Command {
	o := &suggestOptions{}
	c := &cobra.Command{
		Use:   "suggest",
		Short: "Files that usually change with what you are changing, but are not in the change",
		Long: `Given the files being changed (the working tree's changes against HEAD, or
only staged ones with --staged, or --files), list the files that usually
change with them but are not part of the change: "you touched X; Y usually
changes too". Ranked by the weighted co-change recommender (see
'make eval-cochange' for how it compares with pair counts, code-maat's degree
and ROSE association rules). When shared commits run short, files with the
same name stem (x_test.go for x.go) and recently changed files of the same
directory follow, marked as having no shared commit. --files takes paths as
git does (see 'git synaptic cochanges -h').`,
		Example: `  git synaptic suggest
  git synaptic suggest --staged
  git synaptic suggest --files hugolib/site.go,hugolib/page.go --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runSuggest(e, o) })
		},
	}
	c.Flags().BoolVar(&o.staged, "staged", false, "use only staged changes")
	c.Flags().StringSliceVar(&o.files, "files", nil, "use these `files` (comma-separated) instead of the working tree's changes")
	o.cochangeFlags.add(c)
	return c
}

func runSuggest(e *env, o *suggestOptions) error {
	m, err := o.check()
	if err != nil {
		return err
	}
	return e.withService(func(s *app.Service) error {
		files, err := repoPaths(s.Root(), e.dir, o.files)
		if err != nil {
			return err
		}
		query, list, err := s.Code().Suggest(contextOf(e), app.SuggestRequest{Files: files, Staged: o.staged, Method: m, N: o.maxCount, Progress: progress(e, "indexing commits")})
		if err != nil {
			return err
		}
		if o.json {
			list, query = nonNil(list), nonNil(query)
			return writeJSON(e.io.Out, map[string]any{"changed": query, "suggestions": list})
		}
		if len(query) == 0 {
			fmt.Fprintln(e.io.Out, "no changed files (give some with --files)")
			return nil
		}
		sort.Strings(query)
		fmt.Fprintf(e.io.Out, "changed: %s\n", strings.Join(query, ", "))
		if len(list) == 0 {
			fmt.Fprintln(e.io.Out, "no suggestions: these files have no co-change history")
			return nil
		}
		fmt.Fprintln(e.io.Out, "these usually change too:")
		printSuggestions(e.io.Out, list, m, e.clock())
		return nil
	})
}

func newHooks(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "hooks",
		Short: "Install, remove or inspect git-synaptic's git hooks",
		Long: `git-synaptic's git hooks: post-rewrite follows commits rewritten by an amend
or a rebase, pre-push pushes memory along with git push. They are short
versioned scripts that call 'git-synaptic hook NAME', run any hook that was
there before (kept as NAME.pre-synaptic), and never fail or block git.
Nothing runs on commit, merge or checkout: every git synaptic command indexes
the commits made since (see 'git synaptic index'). Installing removes the
post-commit, post-merge and post-checkout hooks of earlier versions.`,
		Example: `  git synaptic hooks install
  git synaptic hooks status
  git synaptic hooks uninstall`,
		Args: usageArgs(cobra.NoArgs),
	}
	for _, sub := range []struct{ use, short string }{
		{"install", "Install the hooks (keeping and chaining existing ones)"},
		{"uninstall", "Remove the hooks and restore the ones they chained"},
		{"status", "Show which hooks are installed"},
	} {
		o := &hooksOptions{action: sub.use}
		c.AddCommand(&cobra.Command{
			Use: sub.use, Short: sub.short, Args: exactArgs(0),
			RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runHooks(e, o) }) },
		})
	}
	return c
}

// hooksOptions are hooks install, uninstall and status's.
type hooksOptions struct{ action string }

func runHooks(e *env, o *hooksOptions) error {
	return e.withService(func(s *app.Service) error {
		var rep app.HooksReport
		var err error
		switch o.action {
		case "install":
			rep, err = s.Code().InstallHooks(contextOf(e))
		case "uninstall":
			rep, err = s.Code().UninstallHooks(contextOf(e))
		default:
			rep, err = s.Code().HooksStatus(contextOf(e))
		}
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.Out, "hooks in %s\n", rep.Dir)
		names := make([]string, 0, len(rep.Actions))
		for n := range rep.Actions {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(e.io.Out, "  %-14s %s\n", n, rep.Actions[n])
		}
		return nil
	})
}

// hookBusy is how long a hook waits for another process's cache write:
// never long enough to hold git or the agent up.
const hookBusy = 2 * time.Second

// runHook runs a git hook or an agent hook. It never fails the caller:
// errors are told on stderr (git's push goes on; the agent goes on).
func runHook(e *env, o *hookOptions) error {
	e.busy = hookBusy
	name := o.args[0]
	var err error
	if name == "pre-push" {
		err = prePush(e, o.args[1:])
	} else {
		err = hookWork(e, name, o.args[1:], o)
	}
	switch {
	case err == nil:
	case errors.Is(err, errPushing):
		fmt.Fprintf(e.io.Err, "git-synaptic: %v; your push goes on.\n", err)
	case name == "pre-push":
		fmt.Fprintf(e.io.Err, "git-synaptic: memory was not pushed (%v); your push goes on. Run 'git synaptic sync' to share memory.\n", err)
	default:
		fmt.Fprintf(e.io.Err, "git-synaptic hook %s: %v (ignored)\n", name, err)
	}
	return nil
}

// hookWork reads what the hook is given on stdin and hands it to the
// application (git hooks) or to the agent-hook front end.
func hookWork(e *env, name string, args []string, o *hookOptions) error {
	if !agenthook.Names[name] {
		var stdin string
		if name == "post-rewrite" {
			b, _ := io.ReadAll(io.LimitReader(e.io.In, 64<<20))
			stdin = string(b)
		}
		return e.withService(func(s *app.Service) error { return s.Code().Hook(contextOf(e), name, args, stdin) })
	}
	req := agenthook.Request{Name: name, Budget: o.budget, EnvFile: os.Getenv("CLAUDE_ENV_FILE")}
	switch o.format {
	case "", "json", "claude":
	case "markdown":
		req.Markdown = true
	default:
		return fmt.Errorf("unknown hook format %q (want json or markdown)", o.format)
	}
	a, err := agents.Lookup(o.agent)
	if err != nil {
		return err
	}
	req.Agent = a
	if stdin, ok := e.io.In.(*os.File); !ok || !isTerminal(stdin) {
		req.Input = agenthook.ReadInput(e.io.In)
	}
	if req.Input.SessionID == "" {
		req.Input.SessionID = config.FromEnv(app.Options{}).Session
	}
	return e.withService(func(s *app.Service) error {
		// VS Code runs the hooks in .claude/settings.json too: when its own
		// are installed, those answer.
		if a.Name == "claude" && req.Input.FromVSCode() && s.WorkTree() != "" {
			if _, err := os.Stat(filepath.Join(s.WorkTree(), filepath.FromSlash(agentsetup.VSCodeHookFile))); err == nil {
				return nil
			}
		}
		return agenthook.Run(contextOf(e), s.Agent(), req, e.io.Out)
	})
}

// newHook is what the installed scripts run. It always exits 0: a hook
// must never fail or block git, nor break an agent's session. Problems go
// to stderr.
type hookOptions struct {
	budget        int
	format, agent string
	args          []string
}

func newHook(e *env) *cobra.Command {
	o := &hookOptions{}
	c := &cobra.Command{
		Use:   "hook NAME [ARGS...]",
		Short: "Run the work of a git hook or an agent hook",
		Long: `Run by the installed git hooks (post-rewrite, and pre-push, which pushes
memory to the remote being pushed to unless git config synaptic.autoPush is
false, waiting for it at most git config synaptic.prePushWait (a duration
such as 30s, or seconds; default 10s)
before it goes on in the background, its output in .git/synaptic/push.log;
post-commit, post-merge and post-checkout, installed by earlier
versions, index new commits) and by coding agents:
  session-start   print the project's memory as context for a new agent
                  session: rules, last handoffs, decisions and context, and
                  what usually changes with the files being worked on, within
                  a budget (--budget, or git config synaptic.contextBudget;
                  default 4000 characters). Runs a maintenance pass first.
                  The answer is the JSON of the agent named with --agent
                  (claude, the default; codex, gemini, cursor, vscode: what
                  git synaptic init --agent writes); --format markdown prints
                  the context alone.
  prompt          with the agent's prompt (hook JSON "prompt" on stdin): the
                  memory of the last 24 hours (at most 5) and, when the
                  prompt asks something, at most 3 strong matches; each
                  at most 500 characters, shown in full 3 times per
                  session (once if unused for a week), then as a digest,
                  then as a stub; all within a
                  budget (--budget, or git config synaptic.promptBudget;
                  default 8000 characters). Prints nothing when there is
                  nothing to add.
  tool            after each tool call (hook JSON "tool_name", "tool_input"):
                  note the tool and the repository files it named for the
                  exchange's capture.
  stop            capture the exchange (prompt, the agent's last message,
                  tools, files) as a private ephemeral entry tagged
                  auto-capture, unless git config synaptic.capture is false;
                  then, as pre-compact does, write (or update) the session's
                  handoff: memory saved, commits made, files left changed,
                  and what was learned.
The session id comes from the agent's hook JSON on stdin (session_id; VS
Code's sessionId, Cursor's conversation_id), else $GIT_SYNAPTIC_SESSION.`,
		Example: `  git synaptic hook session-start --format markdown
  git synaptic hook session-start --budget 8000
  echo '{"session_id":"s1","prompt":"why postgres?"}' | git synaptic hook prompt --agent gemini`,
		Hidden: true,
		Args:   minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runHook(e, o) })
		},
	}
	c.Flags().IntVar(&o.budget, "budget", 0, "session-start and prompt: context size in `characters` (default: synaptic.contextBudget or 4000; synaptic.promptBudget or 8000)")
	c.Flags().StringVar(&o.agent, "agent", "claude", "agent hooks: answer in this `agent`'s hook JSON ("+strings.Join(agents.Names(), ", ")+")")
	c.Flags().StringVar(&o.format, "format", "json", "agent hooks: json (the agent's hook JSON) or markdown (the context alone)")
	return c
}
