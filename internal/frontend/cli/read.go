package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

// filterFlags are the filters log, list and search share.
type filterFlags struct {
	types           []string
	tags            []string
	tier            string
	since, until    string
	author          string
	project         string
	branch          string
	session         string
	includeArchived bool
	onlyArchived    bool
	limit           int
	thisBranch      bool
	allBranches     bool
}

func (f *filterFlags) register(c *cobra.Command, defLimit int) {
	fl := c.Flags()
	fl.StringSliceVarP(&f.types, "type", "t", nil, "only entries of this `type` (repeatable: decision, progress, issue, handoff, insight, reference, rule, note)")
	fl.StringArrayVar(&f.tags, "tag", nil, "only entries with this `tag` (repeatable: all must match)")
	fl.StringVar(&f.tier, "tier", "", "only entries in this `tier` (ephemeral, working, longterm)")
	fl.StringVar(&f.since, "since", "", "only entries created after `time` (2026-01-31, 3d, 2.weeks)")
	fl.StringVar(&f.until, "until", "", "only entries created before `time`")
	fl.StringVar(&f.author, "author", "", "only entries whose author contains `text`")
	fl.StringVar(&f.project, "project", "", "only entries of this `project`")
	fl.StringVar(&f.branch, "branch", "", "only entries saved on this `branch`")
	fl.StringVar(&f.session, "session", "", "only entries of this agent `session`")
	fl.BoolVar(&f.includeArchived, "include-archived", false, "include archived entries")
	fl.BoolVar(&f.onlyArchived, "archived", false, "only archived entries")
	fl.IntVarP(&f.limit, "max-count", "n", defLimit, "show at most `n` entries (0: all)")
	fl.BoolVar(&f.thisBranch, "this-branch", false, "leave out memory written on other branches' unmerged work (by default it is marked and ranked below)")
	fl.BoolVar(&f.allBranches, "all-branches", false, "rank memory of other branches' unmerged work like any other (still marked)")
}

func (f *filterFlags) build(now time.Time) (app.Filter, error) {
	if f.limit < 0 {
		return app.Filter{}, usagef("--max-count must be 0 or more")
	}
	branches := ""
	switch {
	case f.thisBranch && f.allBranches:
		return app.Filter{}, usagef("--this-branch and --all-branches cannot be used together")
	case f.thisBranch:
		branches = "this"
	case f.allBranches:
		branches = "all"
	}
	out, err := app.ParseFilter(app.FilterSpec{Types: f.types, Tags: f.tags, Tier: f.tier, Since: f.since, Until: f.until,
		Author: f.author, Project: f.project, Branch: f.branch, Session: f.session,
		IncludeArchived: f.includeArchived, OnlyArchived: f.onlyArchived, Limit: f.limit, Branches: branches}, now)
	if err != nil {
		return out, usageError{err}
	}
	return out, nil
}

type logOptions struct {
	filter  filterFlags
	oneline bool
	json    bool
	noPager bool
	table   bool // list: a table
}

func newLog(e *env) *cobra.Command {
	o := &logOptions{}
	c := &cobra.Command{
		Use:   "log [flags]",
		Short: "Show memory entries, newest first",
		Example: `  git synaptic log
  git synaptic log --oneline -n 20
  git synaptic log --type decision --tag db --since 2.weeks
  git synaptic log --author alice --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runLog(e, o) }) },
	}
	o.filter.register(c, 0)
	c.Flags().BoolVar(&o.oneline, "oneline", false, "one line per entry")
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.Flags().BoolVar(&o.noPager, "no-pager", false, "do not page the output")
	return c
}

func newList(e *env) *cobra.Command {
	o := &logOptions{table: true}
	c := &cobra.Command{
		Use:   "list [flags]",
		Short: "List memory entries as a table",
		Example: `  git synaptic list
  git synaptic list --type issue --tier working
  git synaptic list --archived
  git synaptic list --tag billing --json`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error { return e.run(o, func() error { return runLog(e, o) }) },
	}
	o.filter.register(c, 50)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func runLog(e *env, o *logOptions) error {
	now := e.clock()
	f, err := o.filter.build(now)
	if err != nil {
		return err
	}
	return e.withService(func(s *app.Service) error {
		rows, err := s.Recall().List(contextOf(e), f)
		if err != nil {
			return err
		}
		if o.json {
			rows = nonNil(rows)
			return writeJSON(e.io.Out, rows)
		}
		if o.table {
			printTable(e.io.Out, rows, now)
			return nil
		}
		w, done := pager(contextOf(e), s, e.io, o.noPager)
		defer done()
		for i, r := range rows {
			if o.oneline {
				fmt.Fprintf(w, "%s %-9s %s%s\n", colour(e.io.TTY, yellow, app.ShortID(r.ID)), r.Type, marks(r), app.FirstLine(r.Content, 100))
				continue
			}
			if i > 0 {
				fmt.Fprintln(w)
			}
			printEntry(w, r, e.io.TTY)
		}
		return nil
	})
}

func flagsOf(r app.Entry) string {
	parts := []string{string(r.Type), string(r.Tier)}
	if r.Pinned {
		parts = append(parts, "pinned")
	}
	switch {
	case r.Decayed:
		parts = append(parts, "archived by decay")
	case r.Archived:
		parts = append(parts, "archived")
	}
	if r.Private {
		parts = append(parts, "private")
	}
	if sub := app.SubscriptionOf(r.Source); sub != "" {
		parts = append(parts, "from subscription "+sub)
	}
	return strings.Join(parts, ", ")
}

// marks label an entry in a one-line listing: "📌 [archived] [private]
// [org] [on feature/x, not merged] [a.go changed in 2 commits since] ".
func marks(r app.Entry) string {
	mark := ""
	if r.Pinned {
		mark = "📌 "
	}
	if r.Archived {
		mark += "[archived] "
	}
	if r.Private {
		mark += "[private] "
	}
	if sub := app.SubscriptionOf(r.Source); sub != "" {
		mark += "[" + sub + "] "
	}
	if m := app.CodeMarks(r); m != "" {
		mark += m + " "
	}
	return mark
}

func printEntry(w io.Writer, r app.Entry, tty bool) {
	head := "entry " + r.ID
	switch r.Type {
	case memory.TypeNote:
		head = "note " + r.ID + " on commit " + r.Commit
	case memory.TypeGitCommit:
		head = "commit " + r.ID
	}
	fmt.Fprintf(w, "%s (%s)\n", colour(tty, yellow, head), flagsOf(r))
	fmt.Fprintf(w, "Author: %s\n", r.Author)
	fmt.Fprintf(w, "Date:   %s\n", r.Created.Local().Format("Mon Jan 2 15:04:05 2006 -0700"))
	if len(r.Tags) > 0 {
		fmt.Fprintf(w, "Tags:   %s\n", strings.Join(r.Tags, ", "))
	}
	if r.Edits > 0 {
		fmt.Fprintf(w, "Edited: %d time(s), last %s\n", r.Edits, r.Updated.Local().Format("Mon Jan 2 15:04:05 2006 -0700"))
	}
	fmt.Fprintln(w)
	for _, line := range strings.Split(strings.TrimRight(r.Content, "\n"), "\n") {
		fmt.Fprintf(w, "    %s\n", line)
	}
}

func printTable(w io.Writer, rows []app.Entry, now time.Time) {
	if len(rows) == 0 {
		fmt.Fprintln(w, "no entries")
		return
	}
	fmt.Fprintf(w, "%-8s  %-9s  %-9s  %-8s  %-20s  %s\n", "ID", "TYPE", "TIER", "AGE", "AUTHOR", "CONTENT")
	for _, r := range rows {
		fmt.Fprintf(w, "%-8s  %-9s  %-9s  %-8s  %-20s  %s%s\n", app.ShortID(r.ID), r.Type, r.Tier, app.Age(now, r.Created), app.FirstLine(app.AuthorName(r.Author), 20), marks(r), app.FirstLine(r.Content, 70))
	}
}

type showOptions struct {
	json bool
	args []string
}

func newShow(e *env) *cobra.Command {
	o := &showOptions{}
	c := &cobra.Command{
		Use:   "show ID",
		Short: "Show one entry with its history (id prefixes accepted)",
		Example: `  git synaptic show 3f2a9c1d
  git synaptic show 3f2a --json`,
		Args: exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runShow(e, o) })
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	return c
}

func runShow(e *env, o *showOptions) error {
	return e.withService(func(s *app.Service) error {
		d, err := s.Recall().Show(contextOf(e), o.args[0])
		if err != nil {
			return err
		}
		if o.json {
			d.Ops = nonNil(d.Ops)
			return writeJSON(e.io.Out, d)
		}
		printEntry(e.io.Out, d.Entry, e.io.TTY)
		fmt.Fprintf(e.io.Out, "\nSource: %s", d.Source)
		if d.Project != "" {
			fmt.Fprintf(e.io.Out, "  Project: %s", d.Project)
		}
		if d.Branch != "" {
			fmt.Fprintf(e.io.Out, "  Branch: %s", d.Branch)
		}
		if d.SessionID != "" {
			fmt.Fprintf(e.io.Out, "  Session: %s", d.SessionID)
		}
		fmt.Fprintln(e.io.Out)
		if d.Anchor != "" {
			fmt.Fprintf(e.io.Out, "Commit: %s", d.Anchor)
			if m := app.CodeMarks(d.Entry); m != "" {
				fmt.Fprintf(e.io.Out, "  %s", m)
			}
			fmt.Fprintln(e.io.Out)
		}
		if len(d.RelatedIDs) > 0 {
			fmt.Fprintf(e.io.Out, "Related: %s\n", strings.Join(d.RelatedIDs, ", "))
		}
		if len(d.Ops) > 0 {
			fmt.Fprintln(e.io.Out, "\nHistory:")
			for _, op := range d.Ops {
				fmt.Fprintf(e.io.Out, "  %s  %-9s %s%s\n", op.At.Local().Format("2006-01-02 15:04"), op.Kind, app.AuthorName(op.Author), describeOp(op))
			}
		}
		return nil
	})
}

func describeOp(op memory.Op) string {
	if d := app.DescribeOp(op); d != "" {
		return ": " + d
	}
	return ""
}

type searchOptions struct {
	filter      filterFlags
	json        bool
	explain     bool
	allProjects bool
	mode        string
	asOf        string
	args        []string
}

func newSearch(e *env) *cobra.Command {
	o := &searchOptions{}
	c := &cobra.Command{
		Use:   "search QUERY...",
		Short: "Search memory: BM25 and local embeddings, fused (hybrid)",
		Long: `Search ranks entries by BM25 full-text relevance and by the cosine similarity
of local sentence embeddings, fuses the two (half normalised BM25, half
cosine; the best matches lend part of their score to the entries saved just
before and after them in their session) and multiplies by each entry's
weight: tier (longterm 1.5, working 1, ephemeral 0.5), recency (half-life 30
days, pinned entries exempt), how often it was recalled (0: 0.7 up to 6+:
1.4) and relevance feedback. The first place goes to the best full-text
match, when there is one.

A time in the query ("in August 2023", "on 3 May", "last week", "two weeks
ago", "yesterday") ranks entries of that time twice as high, and so does an
entry that refers to it ("yesterday I..." written the day after); "recently"
or "lately" favours the newest. Relative times are read against today, or
--as-of; --since and --until filter by time instead. --explain shows how the
time was read.

Without an installed model ('git synaptic model install') search falls back to
BM25 alone and says so. Entries saved since the last search are embedded first,
at most 16 per search; the warm process (git synaptic daemon) embeds the rest
between requests, and 'git synaptic embed' does all of them at once.

--all-projects also searches every repository in your projects ('git
synaptic projects'), private memory included since it is yours, and ranks
the hits as one list labelled with their project. A project that was moved
or deleted is named on stderr and skipped.`,
		Example: `  git synaptic search postgres billing
  git synaptic search "why did we drop redis" --type decision -n 5
  git synaptic search flaky test --since 30d --json
  git synaptic search "what did we decide last week about the cache" --explain
  git synaptic search "database choice" --mode vector --explain
  git synaptic search --all-projects "how do we deploy"`,
		Args: minArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error { return runSearch(e, o) })
		},
	}
	o.filter.register(c, 10)
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.Flags().BoolVar(&o.explain, "explain", false, "show how each result was scored")
	c.Flags().BoolVar(&o.allProjects, "all-projects", false, "search all your projects, not only this repository")
	c.Flags().StringVar(&o.mode, "mode", "auto", "ranking: `auto` (hybrid when a model is installed), hybrid, vector or bm25 (words only)")
	c.Flags().StringVar(&o.asOf, "as-of", "", "read relative times in the query (\"last week\") as of this `date` (2026-01-31, RFC 3339, or an age: 2w)")
	return c
}

func runSearch(e *env, o *searchOptions) error {
	now := e.clock()
	f, err := o.filter.build(now)
	if err != nil {
		return err
	}
	if o.asOf != "" {
		at, err := app.ParseTime(o.asOf, now)
		if err != nil {
			return usagef("--as-of: %v", err)
		}
		e.asOf = at
	}
	if !slices.Contains(app.SearchModes, o.mode) {
		return usagef("--mode: unknown mode %q (want %s)", o.mode, strings.Join(app.SearchModes, ", "))
	}
	req := app.SearchRequest{Query: strings.Join(o.args, " "), Filter: f, Mode: o.mode, Scope: app.ScopeProject}
	if !o.allProjects {
		return e.withService(func(s *app.Service) error { return search(e, o, s, req, now) })
	}
	// across projects it runs from anywhere: outside a repository, from
	// the first project that can be read
	req.Scope = app.ScopeAll
	s, err := e.openForProjects()
	if err != nil {
		return err
	}
	defer s.Close()
	return search(e, o, s, req, now)
}

// search runs req and prints what it found: across projects, each hit
// labelled with its project.
func search(e *env, o *searchOptions, s *app.Service, req app.SearchRequest, now time.Time) error {
	found, info, err := s.Recall().Search(contextOf(e), req)
	if err != nil {
		return err
	}
	all := req.Scope == app.ScopeAll
	if info.Fallback != "" {
		fmt.Fprintln(e.io.Err, "note: "+info.Fallback)
	}
	if info.Pending > 0 {
		fmt.Fprintf(e.io.Err, "note: %d entries are not embedded yet and were matched by their words only; the warm process embeds them in the background ('git synaptic embed' does it now)\n", info.Pending)
	}
	for _, p := range info.Skipped {
		fmt.Fprintf(e.io.Err, "note: skipped %s (%s): %s\n", p.Name, p.Path, p.Problem)
	}
	switch {
	case o.json && all:
		return writeJSON(e.io.Out, nonNil(found))
	case o.json:
		return writeJSON(e.io.Out, app.Hits(found))
	}
	if o.explain {
		head := explainHeader(info.SearchInfo)
		if all {
			head += fmt.Sprintf("; %d projects searched", info.Searched)
		}
		fmt.Fprintf(e.io.Out, "%s\n", colour(e.io.TTY, dim, head))
	}
	if len(found) == 0 {
		fmt.Fprintln(e.io.Out, "no matches")
		return nil
	}
	width, indent := 0, "          "
	if all {
		for _, h := range found {
			width = max(width, min(len(h.Project), 20))
		}
		indent = strings.Repeat(" ", width+2) + indent
	}
	for _, h := range found {
		label := ""
		if all {
			label = fmt.Sprintf("%-*s  ", width, h.Project)
		}
		fmt.Fprintf(e.io.Out, "%s%s  %-9s %-8s %s%s\n", label, colour(e.io.TTY, yellow, app.ShortID(h.ID)), h.Type, app.Age(now, h.Created), marks(h.Entry), app.FirstLine(h.Content, 90-len(label)))
		if h.Pattern != "" {
			fmt.Fprintf(e.io.Out, "%s%s\n", indent, colour(e.io.TTY, yellow, h.Pattern))
		}
		if o.explain {
			fmt.Fprintf(e.io.Out, "%s%s\n", indent, colour(e.io.TTY, dim, explainHit(info.SearchInfo, h.Hit)))
		}
	}
	return nil
}

func explainHeader(info app.SearchInfo) string {
	s := "mode bm25 (lexical)"
	if info.Mode != app.ModeBM25 {
		s = fmt.Sprintf("mode %s, model %s (%s runtime)", info.Mode, info.Model, info.Backend)
	}
	if info.Pending > 0 {
		s += fmt.Sprintf(", %d entries not embedded yet", info.Pending)
	}
	if info.Time != "" {
		s += "; time " + info.Time
	}
	return s
}

func explainHit(info app.SearchInfo, h app.Hit) string {
	weight := fmt.Sprintf("weight %.4f", h.Weight)
	if p := h.Priors; p != nil {
		tier := string(h.Tier) + " tier"
		if h.Type == memory.TypeGitCommit {
			tier = "commit"
		}
		weight += fmt.Sprintf(" = %s %.2f × recency %.3f × confidence %.2f (%d reads) × feedback %.2f", tier, p.Tier, p.Recency, p.Confidence, h.Reads, p.Feedback)
		if p.Time != 1 {
			weight += fmt.Sprintf(" × time %.2f", p.Time)
		}
		if p.Line != 1 {
			weight += fmt.Sprintf(" × other branch %.2f", p.Line)
		}
	}
	if info.Mode == app.ModeBM25 {
		return fmt.Sprintf("score %.4f = bm25 %.3f / best (rank %d) %.4f × %s  (%s, by %s)", h.Score, -h.BM25, h.LexRank, h.Fused, weight, flagsOf(h.Entry), app.AuthorName(h.Author))
	}
	rank := func(r int) string {
		if r == 0 {
			return "-"
		}
		return fmt.Sprint(r)
	}
	context := ""
	if h.Context != 0 {
		context = fmt.Sprintf(", session context %.3f", h.Context)
	}
	return fmt.Sprintf("score %.4f = fused %.4f (bm25 %.3f rank %s, cosine %.3f rank %s%s) × %s  (%s, by %s)",
		h.Score, h.Fused, 0-h.BM25 /* not -0.000 when absent */, rank(h.LexRank), h.Cosine, rank(h.VecRank), context, weight, flagsOf(h.Entry), app.AuthorName(h.Author))
}
