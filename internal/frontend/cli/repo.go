package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/agentsetup"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

type initOptions struct {
	noPush, noHooks, json, remove bool
	agents                        []string
}

func newInit(e *env) *cobra.Command {
	o := &initOptions{}
	c := &cobra.Command{
		Use:   "init",
		Short: "Set up memory in this repository (idempotent)",
		Long: `Set up memory in this repository:
  - fetch refspecs on every remote, so plain 'git fetch' brings teammates' memory
    (refs/synaptic/* and refs/notes/synaptic land under refs/remotes/<remote>/);
    the next git synaptic command merges it in; init fetches the memory of each
    remote it sets up (a fresh clone has it at once; offline, it says so and
    goes on);
  - notes.rewriteRef, so commit notes follow 'git commit --amend' and 'git rebase';
  - git hooks (see 'git synaptic hooks'; skip with --no-hooks): post-rewrite
    follows amended and rebased commits; pre-push pushes memory to the remote you push to,
    with its own push, so 'git push' carries memory but pushes your branches
    exactly as it did before and never fails because of memory (when memory
    cannot go, it says so and your push goes on; --no-push, or git config
    synaptic.autoPush false, leaves memory to 'git synaptic sync');
  - push refspecs an earlier version added (remote.<name>.push) are removed;
  - with --agent, each coding agent's project configuration (repeatable or
    comma-separated; auto: every agent whose project or user configuration is
    here), and the auto-distill rule:
      claude    .mcp.json, hooks in .claude/settings.json
      codex     [mcp_servers] and features.codex_hooks in .codex/config.toml,
                hooks in .codex/hooks.json
      gemini    mcpServers and hooks in .gemini/settings.json
      cursor    .cursor/mcp.json, .cursor/hooks.json, the rule file
                .cursor/rules/git-synaptic.mdc (Cursor's prompt hook cannot
                add context)
      opencode  opencode.json, a block in AGENTS.md (OpenCode has no
                command hooks)
      vscode    .vscode/mcp.json, .github/hooks/git-synaptic.json, a block in
                .github/copilot-instructions.md
    Files are merged: other servers, hooks, settings and comments stay as they
    were. The first change to a file keeps a backup under .git/synaptic/agents.
    --agent NAME --remove takes it out again: a file init created goes, one it
    changed goes back to its backup while nobody else changed it since, else
    exactly git-synaptic's entries are taken out. Only files inside the
    working tree are written, never through a symlink that leaves it;
  - the cache, inside the git directory.
Running it again changes nothing; run it again after adding a remote.`,
		Example: `  git synaptic init
  git synaptic init --agent claude
  git synaptic init --agent codex --agent cursor
  git synaptic init --agent auto
  git synaptic init --agent gemini --remove
  git synaptic init --no-push`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runInit(e, o) }) },
	}
	c.Flags().BoolVar(&o.noPush, "no-push", false, "do not push memory along with git push (synaptic.autoPush false; share with git synaptic sync)")
	c.Flags().BoolVar(&o.noHooks, "no-hooks", false, "do not install git hooks")
	c.Flags().StringSliceVar(&o.agents, "agent", nil, "also set up this coding `agent` (repeatable: "+strings.Join(agents.Names(), ", ")+", or auto)")
	c.Flags().BoolVar(&o.remove, "remove", false, "take the --agent configuration out again (and nothing else)")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

// initReport is init's JSON: the repository's changes and each agent's
// files.
type initReport struct {
	app.InitReport
	Agents []agentsetup.Change `json:"agents"`
}

func runInit(e *env, o *initOptions) error {
	if o.remove && len(o.agents) == 0 {
		return usageError{errors.New("--remove takes out the configuration of the agents named with --agent (git synaptic init --agent NAME --remove)")}
	}
	return e.withService(func(s *app.Service) error {
		ctx := contextOf(e)
		rep := initReport{InitReport: app.InitReport{CachePath: s.CachePath()}}
		setup := agentsetup.Options{Root: s.WorkTree(), StateDir: filepath.Join(s.StateDir(), "agents"), Rule: app.DistillRule}
		setup.Home, _ = os.UserHomeDir()
		chosen, err := chooseAgents(o.agents, setup)
		if err != nil {
			return err
		}
		if len(chosen) > 0 && setup.Root == "" {
			return app.Invalidf("a bare repository has no working tree for agent settings")
		}
		if !o.remove {
			if rep.InitReport, err = s.Sharing().Init(ctx, app.InitOptions{NoPush: o.noPush, NoHooks: o.noHooks}); err != nil {
				return err
			}
		}
		for _, a := range chosen {
			do := agentsetup.Setup
			if o.remove {
				do = agentsetup.Remove
			}
			changes, err := do(setup, a)
			rep.Agents = append(rep.Agents, changes...)
			if err != nil {
				return errors.Join(printInit(e, o, rep), err)
			}
		}
		if len(chosen) > 0 && !o.remove {
			did, err := s.Agent().EnsureDistillRule(ctx)
			if err != nil {
				return errors.Join(printInit(e, o, rep), err)
			}
			if did != "" {
				rep.Changes = append(rep.Changes, did)
			}
		}
		return printInit(e, o, rep)
	})
}

// chooseAgents reads --agent: names, comma-separated or repeated, and
// auto.
func chooseAgents(names []string, setup agentsetup.Options) ([]agents.Agent, error) {
	var chosen []agents.Agent
	seen := map[string]bool{}
	add := func(a agents.Agent) {
		if !seen[a.Name] {
			seen[a.Name] = true
			chosen = append(chosen, a)
		}
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if strings.EqualFold(n, "auto") {
			found := agentsetup.Detect(setup)
			if len(found) == 0 {
				return nil, usageError{fmt.Errorf("--agent auto found no coding agent's configuration here or in your home folder; name one: --agent %s", strings.Join(agents.Names(), "|"))}
			}
			for _, a := range found {
				add(a)
			}
			continue
		}
		a, err := agents.Lookup(n)
		if err != nil {
			return nil, usageError{err}
		}
		add(a)
	}
	return chosen, nil
}

func printInit(e *env, o *initOptions, rep initReport) error {
	if o.json {
		if rep.Changes == nil {
			rep.Changes = []string{}
		}
		if rep.Agents == nil {
			rep.Agents = []agentsetup.Change{}
		}
		return writeJSON(e.io.Out, rep)
	}
	for _, ch := range rep.Changes {
		fmt.Fprintln(e.io.Out, ch)
	}
	for _, f := range rep.Fetched {
		if f.Error != "" {
			fmt.Fprintf(e.io.Out, "memory of %s not fetched (%s); git synaptic sync fetches it later\n", f.Remote, f.Error)
		}
	}
	changed := len(rep.Changes) > 0
	for _, a := range rep.Agents {
		if a.Action != "unchanged" {
			changed = true
			line := fmt.Sprintf("%s: %s %s", a.Agent, a.Action, a.Path)
			if a.Backup != "" {
				line += " (backup: " + a.Backup + ")"
			}
			fmt.Fprintln(e.io.Out, line)
		}
		if a.Note != "" {
			fmt.Fprintf(e.io.Out, "%s: %s\n", a.Agent, a.Note)
		}
	}
	switch {
	case o.remove && !changed:
		fmt.Fprintln(e.io.Out, "nothing to remove")
	case o.remove:
	case !changed:
		fmt.Fprintln(e.io.Out, "already set up")
	}
	if !o.remove {
		fmt.Fprintf(e.io.Out, "cache %s\n", rep.CachePath)
	}
	return nil
}

type statusOptions struct{ json bool }

func newStatus(e *env) *cobra.Command {
	o := &statusOptions{}
	c := &cobra.Command{
		Use:   "status",
		Short: "Show counts by type and tier, cache state, refs and remote sync state",
		Example: `  git synaptic status
  git synaptic status --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runStatus(e, o) }) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

type repairOptions struct{ json bool }

func newRepair(e *env) *cobra.Command {
	o := &repairOptions{}
	c := &cobra.Command{
		Use:   "repair",
		Short: "Mend memory refs that lack objects (after git gc --prune=now, a disk error)",
		Long: `Check every memory ref for missing objects and mend those that lack any:
refs/synaptic/memory, the private ref and the notes ref move back to their
newest complete commit, and the entries and operations git lost are written
again from the local cache; a remote-tracking or subscription ref is removed
(the next sync fetches it again), and so is any other ref under
refs/synaptic/ whose commit is gone (it blocks git fetch). What was done is
printed and appended to .git/synaptic/repair.log. git synaptic status says
when a repair is needed; sync repairs before it fetches.`,
		Example: `  git synaptic status     # says DAMAGED when a ref lacks objects
  git synaptic repair
  git synaptic repair --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runRepair(e, o) }) },
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func runRepair(e *env, o *repairOptions) error {
	return e.withService(func(s *app.Service) error {
		done, err := s.Memory().Repair(contextOf(e))
		if o.json {
			if jerr := writeJSON(e.io.Out, map[string]any{"repaired": nonNil(done)}); err == nil {
				err = jerr
			}
			return err
		}
		for _, r := range done {
			to := "removed"
			if r.To != "" {
				to = app.ShortID(r.To)
			}
			fmt.Fprintf(e.io.Out, "%s: %s -> %s: %s (%d objects were missing, %d documents written again from the cache)\n", r.Ref, app.ShortID(r.From), to, r.Action, r.Missing, r.Recovered)
		}
		if err == nil && len(done) == 0 {
			fmt.Fprintln(e.io.Out, "every memory ref is complete; nothing to repair")
		}
		return err
	})
}

func runStatus(e *env, o *statusOptions) error {
	return e.withService(func(s *app.Service) error {
		st, err := s.Status(contextOf(e))
		if err != nil {
			return err
		}
		if o.json {
			if err := writeJSON(e.io.Out, st); err != nil || len(st.Damaged) == 0 {
				return err
			}
			return fmt.Errorf("memory is damaged: run 'git synaptic repair'")
		}
		w := e.io.Out
		io.WriteString(w, st.Overview())
		fmt.Fprintf(w, "cache %s (%.1f MiB)\n", st.CachePath, float64(st.CacheBytes)/(1<<20))
		if st.Cochange != nil {
			fmt.Fprintf(w, "co-change ranking: tuned on %d of %d commits: %s\n", st.Cochange.Validation, st.Cochange.Commits, tuningSummary(*st.Cochange))
		}
		if len(st.Hooks) > 0 {
			var parts []string
			for _, name := range app.GitHooks() {
				parts = append(parts, name+": "+st.Hooks[name])
			}
			fmt.Fprintf(w, "git hooks: %s\n", strings.Join(parts, "; "))
		}
		for _, r := range st.Refs {
			state := "indexed"
			if !r.Indexed {
				state = "NOT indexed"
			}
			fmt.Fprintf(w, "ref %s %s (%s)\n", r.Ref, app.ShortID(r.Tip), state)
		}
		for _, r := range st.Remotes {
			cfg := ""
			if !r.Configured {
				cfg = " [not set up for plain git fetch/push: git synaptic init]"
			}
			fmt.Fprintf(w, "remote %s %s: %s%s\n", r.Remote, r.Ref, r.State, cfg)
		}
		for _, sub := range st.Subscriptions {
			fmt.Fprintf(w, "subscription %s: %d entries from %s (read-only; sync fetches it)\n", sub.Name, sub.Entries, sub.URL)
		}
		if len(st.Problems) > 0 {
			fmt.Fprintf(w, "%d unreadable memory object(s), skipped:\n", len(st.Problems))
			for _, p := range st.Problems {
				fmt.Fprintf(w, "  %s: %s (object %s): %s\n", p.Source, p.Path, app.ShortID(p.Object), p.Message)
			}
		}
		for _, r := range st.Repaired {
			fmt.Fprintf(w, "cache repaired: %s; rebuilt from the refs\n", r)
		}
		for _, d := range st.Damaged {
			what := fmt.Sprintf("%d objects missing", d.Missing)
			if d.Dangling {
				what = "its commit is missing"
			}
			fmt.Fprintf(w, "DAMAGED %s at %s: %s (git gc --prune=now beside a writer, or a disk error)\n", d.Ref, app.ShortID(d.Tip), what)
		}
		if len(st.Damaged) > 0 {
			return fmt.Errorf("memory is damaged: run 'git synaptic repair' to move the refs back to complete commits and write lost entries again from the cache")
		}
		if len(st.Repaired) == 0 {
			fmt.Fprintln(w, "cache consistent with the refs")
		}
		return nil
	})
}

type noteOptions struct {
	file        string
	allowSecret bool
	args        []string
}

func newNote(e *env) *cobra.Command {
	o := &noteOptions{}
	c := &cobra.Command{
		Use:   "note COMMIT [TEXT...]",
		Short: "Attach memory to a commit as a git note (refs/notes/synaptic)",
		Long: `Attach text to a commit as a git note under refs/notes/synaptic, appended to
any note already there. 'git log --notes=synaptic' shows it, and it is indexed
and searchable like entries. It prints the note's id, 40 hex digits derived
from the commit's (so every clone gives the note the same id), which show,
feedback and the other commands take like an entry's.`,
		Example: `  git synaptic note HEAD "why: the retry loop papers over a race in the pool"
  git synaptic note a1b2c3d -F postmortem.md
  git log --notes=synaptic`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runNote(e, o) })
		},
	}
	c.Flags().StringVarP(&o.file, "file", "F", "", "read the note from `file` (- for stdin)")
	c.Flags().BoolVar(&o.allowSecret, "allow-secret", false, "save even if the text looks like a credential")
	return c
}

func runNote(e *env, o *noteOptions) error {
	text, err := readContent(e, o.args[1:], o.file)
	if err != nil {
		return err
	}
	return e.withService(func(s *app.Service) error {
		commit, err := s.Memory().Note(contextOf(e), o.args[0], text, o.allowSecret)
		if err != nil {
			return err
		}
		// the note's entry id (what show, search and feedback take), as
		// show's header gives it
		fmt.Fprintf(e.io.Out, "note %s on commit %s\n", memory.NoteID(commit), commit)
		return nil
	})
}

type syncOptions struct {
	json bool
	args []string
}

func newSync(e *env) *cobra.Command {
	o := &syncOptions{}
	c := &cobra.Command{
		Use:   "sync [REMOTE]",
		Short: "Fetch memory from a remote, merge it with local memory, push the result",
		Long: `Fetch refs/synaptic/* and refs/notes/synaptic from REMOTE (default: origin, or
the only remote), merge them with local memory (a union: nothing is lost, no
conflicts), and push the result. Private memory is never pushed: it lives in a
repository of its own inside the git dir, out of reach of any push.`,
		Example: `  git synaptic sync
  git synaptic sync upstream --json`,
		Args: rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runSync(e, o) })
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

// syncReport is sync's JSON: the remote's part, and each subscription's.
type syncReport struct {
	app.SyncReport
	Subscriptions []app.SubscriptionSync `json:"subscriptions,omitempty"`
}

func runSync(e *env, o *syncOptions) error {
	remote := ""
	if len(o.args) == 1 {
		remote = o.args[0]
	}
	return e.withService(func(s *app.Service) error {
		ctx := contextOf(e)
		r, err := s.Sharing().Sync(ctx, remote)
		rep := &syncReport{SyncReport: r}
		if err != nil {
			// With no remote at all, a repository may still follow
			// subscriptions: fetch those.
			subs, serr := s.Sharing().Subscriptions(ctx)
			if remote != "" || !errors.Is(err, app.ErrNoRemote) || serr != nil || len(subs) == 0 {
				return err
			}
			rep.Remote = ""
		}
		subErr := syncSubscriptions(e, s, rep)
		if o.json {
			if rep.Pushed == nil {
				rep.Pushed = []string{}
			}
			if jerr := writeJSON(e.io.Out, rep); jerr != nil {
				return jerr
			}
			return subErr
		}
		if rep.Remote != "" {
			for ref, res := range rep.Merged {
				fmt.Fprintf(e.io.Out, "merge %s: %s\n", ref, res)
			}
			if len(rep.Pushed) > 0 {
				fmt.Fprintf(e.io.Out, "push %s: %s\n", rep.Remote, strings.Join(rep.Pushed, " "))
			} else {
				fmt.Fprintf(e.io.Out, "push %s: nothing to push\n", rep.Remote)
			}
			fmt.Fprintf(e.io.Out, "entries: %d before, %d after\n", rep.Before, rep.After)
		}
		for _, sub := range rep.Subscriptions {
			switch {
			case sub.Error != "":
				fmt.Fprintf(e.io.Err, "subscription %s: %s\n", sub.Name, sub.Error)
			case sub.Moved:
				fmt.Fprintf(e.io.Out, "subscription %s: updated\n", sub.Name)
			default:
				fmt.Fprintf(e.io.Out, "subscription %s: up to date\n", sub.Name)
			}
		}
		return subErr
	})
}

type reindexOptions struct{}

func newReindex(e *env) *cobra.Command {
	o := &reindexOptions{}
	return &cobra.Command{
		Use:   "reindex",
		Short: "Delete the cache and rebuild it from the memory refs",
		Long: `Delete the cache (.git/synaptic/cache.db) and rebuild it from the memory
refs and the indexed commits. Two files beside it are kept: usage.db, this
clone's record of which entries were used when (decay reads it; the
verdicts are recomputed at once), and vectors.db, so that nothing is
embedded again.`,
		Example: "  git synaptic reindex",
		Args:    exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runReindex(e, o) })
		},
	}
}

func runReindex(e *env, o *reindexOptions) error {
	return e.withService(func(s *app.Service) error {
		n, err := s.Recall().Reindex(contextOf(e), app.ReindexProgress{Restore: progress(e, "taking back stored vectors")})
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.Out, "reindexed %d entries into %s\n", n, s.CachePath())
		return nil
	})
}

type maintainOptions struct {
	dryRun, json bool
}

func newMaintain(e *env) *cobra.Command {
	o := &maintainOptions{}
	c := &cobra.Command{
		Use:   "maintain",
		Short: "Recompute tiers and decay: promote, demote and archive idle entries",
		Long: `Recompute every entry's tier and decay from its type, age, last change and how
often it was used in this clone (search results and show count as uses; agent hooks count
what they inject, once per session):
  - decisions and insights older than 7 days become longterm;
  - ephemeral entries used 3+ times become working;
  - working entries idle 15/30/60 days (0, 1-2, 3+ uses) drop to ephemeral;
  - handoffs and progress notes idle 3/7/14 days are archived.
Pinned entries and entries with an explicit tier are left alone. The result
is local (the shared memory is unchanged) and any edit, pin or unarchive of
an entry clears it until the next pass; 'list --archived' shows what decayed.`,
		Example: `  git synaptic maintain --dry-run
  git synaptic maintain --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runMaintain(e, o) })
		},
	}
	c.Flags().BoolVar(&o.dryRun, "dry-run", false, "report what would change, change nothing")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func runMaintain(e *env, o *maintainOptions) error {
	return e.withService(func(s *app.Service) error {
		rep, err := s.Memory().Maintain(contextOf(e), o.dryRun)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, rep)
		}
		verb := "changed"
		if o.dryRun {
			verb = "would change"
		}
		fmt.Fprintf(e.io.Out, "checked %d entries, %s %d\n", rep.Checked, verb, len(rep.Changes))
		for _, ch := range rep.Changes {
			what := fmt.Sprintf("%s -> %s", ch.From, ch.To)
			if ch.Archived {
				what = "archived"
			}
			fmt.Fprintf(e.io.Out, "  %s %-9s %-22s %s\n", app.ShortID(ch.ID), ch.Type, what, ch.Reason)
		}
		return nil
	})
}
