package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
)

func newProjects(e *env) *cobra.Command {
	o := &projectsListOptions{}
	c := &cobra.Command{
		Use:   "projects",
		Short: "List, add and remove the projects searched by --all-projects",
		Long: `Your projects are the repositories whose memory 'search --all-projects' and
an agent's session start ("From other projects") read. 'git synaptic init'
adds each repository it sets up. The list is one file,
$XDG_DATA_HOME/git-synaptic/projects.json (else ~/.local/share/...); it holds
paths only, never memory.

A project that was moved or deleted is shown as such and skipped by searches:
remove it, and add it again where it now lives.`,
		Example: `  git synaptic projects
  git synaptic projects add ~/src/billing
  git synaptic projects remove ~/src/old-prototype
  git synaptic search --all-projects "how do we deploy"`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runProjectsList(e, o) })
		},
	}
	c.Flags().BoolVar(&o.json, "json", false, "print JSON")
	c.AddCommand(newProjectsList(e), newProjectsAdd(e), newProjectsRemove(e))
	return c
}

type projectsListOptions struct{ json bool }

func newProjectsList(e *env) *cobra.Command {
	o := &projectsListOptions{}
	return withJSON(&cobra.Command{
		Use:   "list",
		Short: "List your projects, marking those that cannot be read",
		Args:  exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runProjectsList(e, o) })
		},
	}, &o.json)
}

func projectListPath() string { return config.FromEnv(app.Options{}).Projects }

func runProjectsList(e *env, o *projectsListOptions) error {
	ps, err := app.Projects(projectListPath())
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(e.io.Out, nonNil(ps))
	}
	if len(ps) == 0 {
		fmt.Fprintln(e.io.Out, "no projects yet: 'git synaptic init' or 'git synaptic projects add' in a repository adds it")
		return nil
	}
	for _, p := range ps {
		line := fmt.Sprintf("%-20s %s", p.Name, p.Path)
		if p.Problem != "" {
			line += colour(e.io.TTY, yellow, "  ("+p.Problem+")")
		}
		fmt.Fprintln(e.io.Out, line)
	}
	return nil
}

type projectsPathOptions struct{ args []string }

func newProjectsAdd(e *env) *cobra.Command {
	o := &projectsPathOptions{}
	return &cobra.Command{
		Use:     "add [PATH]",
		Short:   "Add the repository at PATH (default: the current one) to your projects",
		Example: "  git synaptic projects add\n  git synaptic projects add ~/src/billing",
		Args:    rangeArgs(0, 1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error {
				dir := e.dir
				if len(o.args) == 1 {
					dir = o.args[0]
				}
				p, added, err := app.AddProject(projectListPath(), dir, time.Now())
				if err != nil {
					return err
				}
				if !added {
					fmt.Fprintf(e.io.Out, "%s is already in your projects (%s)\n", p.Path, p.Name)
					return nil
				}
				fmt.Fprintf(e.io.Out, "added %s (%s)\n", p.Path, p.Name)
				return nil
			})
		},
	}
}

func newProjectsRemove(e *env) *cobra.Command {
	o := &projectsPathOptions{}
	return &cobra.Command{
		Use:     "remove PATH",
		Short:   "Remove PATH from your projects (its memory is untouched)",
		Example: "  git synaptic projects remove ~/src/old-prototype",
		Args:    exactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.args = args
			return e.run(o, func() error {
				path, err := app.RemoveProject(projectListPath(), o.args[0])
				if err != nil {
					return err
				}
				fmt.Fprintf(e.io.Out, "removed %s from your projects\n", path)
				return nil
			})
		},
	}
}

// openForProjects opens the current repository, or, outside any, the
// first readable project, for a search across projects.
func (e *env) openForProjects() (*app.Service, error) {
	s, err := e.open()
	if !errors.Is(err, app.ErrNotRepo) {
		return s, err
	}
	ps, lerr := app.Projects(projectListPath())
	if lerr != nil {
		return nil, lerr
	}
	for _, p := range ps {
		if p.Problem == "" {
			if s, perr := e.openAt(p.Path); perr == nil {
				return s, nil
			}
		}
	}
	return nil, fmt.Errorf("%w, and none of your projects can be read (see 'git synaptic projects')", err)
}
