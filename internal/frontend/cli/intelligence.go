package cli

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

// printGroup lists a group's entries, one line each.
func printGroup(e *env, now time.Time, g app.Group) {
	for _, r := range g.Entries {
		fmt.Fprintf(e.io.Out, "  %s  %-8s %-8s %s\n", colour(e.io.TTY, yellow, app.ShortID(r.ID)), r.Type, app.Age(now, r.Created), app.FirstLine(r.Content, 80))
	}
}

type patternsOptions struct {
	json bool
}

func newPatterns(e *env) *cobra.Command {
	o := &patternsOptions{}
	c := withJSON(&cobra.Command{
		Use:   "patterns",
		Short: "Recurring issues: three or more similar issues in the last 30 days",
		Long: `An issue with two or more similar issues (cosine similarity of their
embeddings ≥ 0.75) saved in the last 30 days forms a recurring-issue
pattern. Search results carry "[Pattern: seen N times since DATE]" on its
issues, and session-start context lists it, until 'patterns resolve' marks
it solved (each issue gets the tag pattern-resolved, which syncs). Needs the
embedding model.`,
		Example: `  git synaptic patterns
  git synaptic patterns resolve 3f2a9c1d`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runPatterns(e, o) })
		},
	}, &o.json)
	c.AddCommand(newPatternsResolve(e))
	return c
}

func runPatterns(e *env, o *patternsOptions) error {
	return e.withService(func(s *app.Service) error {
		groups, err := s.Memory().Patterns(contextOf(e))
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, nonNil(groups))
		}
		if len(groups) == 0 {
			fmt.Fprintln(e.io.Out, "no recurring issues in the last 30 days")
		}
		now := e.clock()
		for _, g := range groups {
			fmt.Fprintf(e.io.Out, "pattern %s %s\n", app.ShortID(g.ID), app.PatternLabel(g))
			printGroup(e, now, g)
		}
		return nil
	})
}

type patternsResolveOptions struct {
	args []string
}

func newPatternsResolve(e *env) *cobra.Command {
	o := &patternsResolveOptions{}
	return &cobra.Command{
		Use:   "resolve ID",
		Short: "Mark the pattern holding an issue as resolved",
		Args:  exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runPatternsResolve(e, o) })
		},
	}
}

func runPatternsResolve(e *env, o *patternsResolveOptions) error {
	return e.withService(func(s *app.Service) error {
		g, err := s.Memory().ResolvePattern(contextOf(e), o.args[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.io.Out, "resolved pattern %s (%d issues)\n", app.ShortID(g.ID), len(g.Entries))
		return nil
	})
}

type consolidateOptions struct {
	json bool
}

func newConsolidate(e *env) *cobra.Command {
	o := &consolidateOptions{}
	return withJSON(&cobra.Command{
		Use:   "consolidate",
		Short: "Groups of similar issues and decisions worth merging into one longterm entry",
		Long: `Lists groups of three or more issues and decisions of the last 30 days whose
embeddings are alike (cosine ≥ 0.75; shared tags count a little). Nothing is
changed: write one summary per group and archive the originals.`,
		Example: `  git synaptic consolidate
  git synaptic save "summary..." --tier longterm --related ID1,ID2,ID3 && git synaptic archive ID1 ID2 ID3`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runConsolidate(e, o) })
		},
	}, &o.json)
}

func runConsolidate(e *env, o *consolidateOptions) error {
	return e.withService(func(s *app.Service) error {
		groups, err := s.Memory().Consolidation(contextOf(e))
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, nonNil(groups))
		}
		if len(groups) == 0 {
			fmt.Fprintln(e.io.Out, "nothing to consolidate")
			return nil
		}
		now := e.clock()
		for i, g := range groups {
			fmt.Fprintf(e.io.Out, "group %d (%d entries)\n", i+1, len(g.Entries))
			printGroup(e, now, g)
		}
		fmt.Fprintln(e.io.Out, "\n"+app.ConsolidationHowTo)
		return nil
	})
}

func newRules(e *env) *cobra.Command {
	c := &cobra.Command{
		Use:   "rules",
		Short: "Rules, and corrections waiting to become rules",
		Long: `Rules are entries of type rule: standing instructions agents get first at
session start. A rule may carry a label (its tag rule:LABEL; agents set it
with the MCP tool context_save_rule). A saved entry tagged 'correction', or
phrased as a directive ("Always ...", "Never ...", "Don't ...", "from now
on", "I prefer", "you should", "that's wrong", or, with the model, close to
a directive template), is a pending rule until
accepted (a rule is saved, linked to it) or dismissed. A pending rule
similar to an existing rule (cosine ≥ 0.7) is shown as a possible
conflict.`,
		Example: `  git synaptic rules
  git synaptic rules pending
  git synaptic rules accept 3f2a9c1d
  git synaptic rules dismiss 3f2a9c1d`,
	}
	list := newRulesList(e)
	c.AddCommand(list, newRulesPending(e), newRuleVerdict(e, true), newRuleVerdict(e, false))
	c.RunE = list.RunE
	c.Flags().AddFlagSet(list.Flags()) // rules is rules list: --json too
	c.Args = exactArgs(0)
	return c
}

type rulesListOptions struct {
	json bool
}

func newRulesList(e *env) *cobra.Command {
	o := &rulesListOptions{}
	return withJSON(&cobra.Command{
		Use:   "list",
		Short: "List rules, with their labels",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runRulesList(e, o) })
		},
	}, &o.json)
}

func runRulesList(e *env, o *rulesListOptions) error {
	return e.withService(func(s *app.Service) error {
		rules, err := s.Agent().Rules(contextOf(e), 200)
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, nonNil(rules))
		}
		if len(rules) == 0 {
			fmt.Fprintln(e.io.Out, `no rules yet (git synaptic save "TEXT" --type rule adds one)`)
			return nil
		}
		now := e.clock()
		for _, r := range rules {
			label := ""
			if r.Label != "" {
				label = "[" + r.Label + "] "
			}
			fmt.Fprintf(e.io.Out, "%s  %-8s %s%s\n", colour(e.io.TTY, yellow, app.ShortID(r.ID)), app.Age(now, r.Created), label, app.FirstLine(r.Content, 90))
		}
		return nil
	})
}

type rulesPendingOptions struct {
	json bool
}

func newRulesPending(e *env) *cobra.Command {
	o := &rulesPendingOptions{}
	return withJSON(&cobra.Command{
		Use:   "pending",
		Short: "Corrections waiting to be accepted as rules or dismissed, with conflicts",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runRulesPending(e, o) })
		},
	}, &o.json)
}

func runRulesPending(e *env, o *rulesPendingOptions) error {
	return e.withService(func(s *app.Service) error {
		list, err := s.Agent().PendingRules(contextOf(e))
		if err != nil {
			return err
		}
		if o.json {
			return writeJSON(e.io.Out, nonNil(list))
		}
		if len(list) == 0 {
			fmt.Fprintln(e.io.Out, "no pending rules")
		}
		now := e.clock()
		for _, p := range list {
			fmt.Fprintf(e.io.Out, "%s  %-8s %s\n", colour(e.io.TTY, yellow, app.ShortID(p.ID)), app.Age(now, p.Created), app.FirstLine(p.Content, 90))
			for _, r := range p.Conflicts {
				fmt.Fprintf(e.io.Out, "          may conflict with rule %s (similarity %.2f): %s\n", app.ShortID(r.ID), r.Similarity, app.FirstLine(r.Content, 60))
			}
		}
		return nil
	})
}

// newRuleVerdict is rules accept (a correction becomes a rule, whose id
// it prints) or rules dismiss (which prints "dismiss ID").
type ruleVerdictOptions struct {
	accept bool
	label  string
	args   []string
}

func newRuleVerdict(e *env, accept bool) *cobra.Command {
	use, short := "accept ID", "Save a correction as a rule"
	if !accept {
		use, short = "dismiss ID", "Mark a correction as not a rule"
	}
	o := &ruleVerdictOptions{accept: accept}
	c := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runRuleVerdict(e, o) })
		},
	}
	if accept {
		c.Flags().StringVar(&o.label, "label", "", "a short `label` for the rule (its tag rule:LABEL)")
		c.Example = "  git synaptic rules accept 3f2a9c1d --label use-pnpm"
	}
	return c
}

func runRuleVerdict(e *env, o *ruleVerdictOptions) error {
	return e.withService(func(s *app.Service) error {
		if !o.accept {
			op, err := s.Agent().DismissRule(contextOf(e), o.args[0])
			if err == nil {
				fmt.Fprintf(e.io.Out, "dismiss %s\n", op.Entry) // as pin and archive report
			}
			return err
		}
		rule, err := s.Agent().AcceptRule(contextOf(e), o.args[0], o.label)
		if err != nil {
			return err
		}
		fmt.Fprintln(e.io.Out, rule.ID)
		return nil
	})
}
