package cli

import (
	"fmt"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/spf13/cobra"
)

type verifyOptions struct {
	json    bool
	confirm bool
	args    []string
}

func newVerify(e *env) *cobra.Command {
	o := &verifyOptions{}
	c := &cobra.Command{
		Use:   "verify [ID...]",
		Short: "List memory whose files changed since it was written, with the commits that changed them",
		Long: `Reads memory against this worktree's HEAD. Every entry records the
commit it was written on and the files its text names ("billing/retry.go",
"retry.go:42") with their contents there. An entry whose files changed
since is stale: it may describe code that is no longer so. verify lists
the stale ones (or, given ids, reports on each), with the commits that
changed each file, so that a person or agent can confirm, edit or archive
them. Editing an entry, marking it relevant, or --confirm anchors it at
HEAD again: it is current until its files change again.

Entries written on another branch's unmerged work are marked
[on BRANCH, not merged]. Everything is read from local git.`,
		Example: `  git synaptic verify
  git synaptic verify 3f2a9c1d --json
  git synaptic verify --confirm 3f2a9c1d`,
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			if o.confirm && len(args) == 0 {
				return usagef("--confirm needs the ids of the entries to confirm")
			}
			return e.run(o, func() error { return runVerify(e, o) })
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.Flags().BoolVar(&o.confirm, "confirm", false, "record that the entries still hold for the code at HEAD")
	return c
}

func runVerify(e *env, o *verifyOptions) error {
	return e.withService(func(s *app.Service) error {
		ctx := contextOf(e)
		if o.confirm {
			var confirmed []string
			at := ""
			for _, id := range o.args {
				op, err := s.Memory().Confirm(ctx, id)
				if err != nil {
					return err
				}
				confirmed, at = append(confirmed, op.Entry), op.Anchor[:min(12, len(op.Anchor))]
				if !o.json {
					fmt.Fprintf(e.io.Out, "confirmed %s at %s\n", app.ShortID(op.Entry), at)
				}
			}
			if o.json {
				return writeJSON(e.io.Out, map[string]any{"confirmed": confirmed, "at": at})
			}
			return nil
		}
		rep, err := s.Recall().Verify(ctx, o.args)
		if err != nil {
			return err
		}
		if o.json {
			rep.Stale = nonNil(rep.Stale)
			return writeJSON(e.io.Out, rep)
		}
		now := s.Now()
		w := e.io.Out
		for _, v := range append(rep.Stale, rep.Current...) {
			fmt.Fprintf(w, "%s %-9s %-8s %s%s\n", colour(e.io.TTY, yellow, app.ShortID(v.ID)), v.Type, app.Age(now, v.Created), marks(v.Entry), app.FirstLine(v.Content, 90))
			if len(v.Files) == 0 && len(o.args) > 0 {
				fmt.Fprintln(w, "    names no file of the repository: nothing to check")
			} else if len(v.Stale) == 0 && len(o.args) > 0 {
				fmt.Fprintln(w, "    current: the files it names are as they were")
			}
			for _, c := range v.Changes {
				for _, r := range c.Recent {
					fmt.Fprintf(w, "    %s %s %s %s\n", colour(e.io.TTY, dim, c.Path), r.Commit[:min(12, len(r.Commit))], r.Time.Local().Format("2006-01-02"), app.FirstLine(r.Subject, 70))
				}
			}
		}
		head := rep.Head
		if len(head) > 12 {
			head = head[:12]
		}
		switch {
		case rep.Head == "":
			fmt.Fprintln(w, "no commit yet: nothing to check against")
		case len(rep.Stale) > 0:
			fmt.Fprintf(w, "%d of %s naming files changed since (HEAD %s): confirm with 'git synaptic verify --confirm ID', or edit or archive them\n",
				len(rep.Stale), app.Plural(rep.Checked, "entry"), head)
		default:
			fmt.Fprintf(w, "%s naming files: all current at HEAD %s\n", app.Plural(rep.Checked, "entry"), head)
		}
		return nil
	})
}
