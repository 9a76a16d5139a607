package cli

import (
	"fmt"
	"net"
	"os/exec"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/frontend/web"
)

type webOptions struct {
	port int
	open bool
}

func newWeb(e *env) *cobra.Command {
	o := &webOptions{}
	c := &cobra.Command{
		Use:   "web",
		Short: "Browse and review memory in your browser (local server on 127.0.0.1)",
		Long: `Serve a view of this repository's memory on 127.0.0.1 until interrupted:
the timeline with filters, search (with the score parts on request), each
entry with its history of edits as a diff, related entries, pending rules to
accept or dismiss, recurring issues to resolve, a file's co-change
neighbourhood, and the status.

The URL printed carries a random token for this run: other users of this
machine and web pages cannot read the server without it. Accepting,
dismissing and resolving are the only writes, each an ordinary operation in
the memory refs.`,
		Example: `  git synaptic web
  git synaptic web --port 7070 --open`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runWeb(e, o) })
		},
	}
	c.Flags().IntVar(&o.port, "port", 0, "listen on this `port` (default: any free one)")
	c.Flags().BoolVar(&o.open, "open", false, "open the page in the default browser (xdg-open)")
	return c
}

func runWeb(e *env, o *webOptions) error {
	if o.port < 0 || o.port > 65535 {
		return usageError{fmt.Errorf("--port %d: not a port", o.port)}
	}
	s, err := app.OpenSession(e.dir, config.FromEnv(app.Options{Warn: e.io.Err, BusyTimeout: e.busy}))
	if err != nil {
		return err
	}
	defer s.Close()
	token, err := web.NewToken()
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(o.port)))
	if err != nil {
		return fmt.Errorf("listen on 127.0.0.1:%d: %w", o.port, err)
	}
	srv, err := web.New(s, token, ln.Addr().String())
	if err != nil {
		ln.Close()
		return err
	}
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), token)
	var project string
	s.Do(contextOf(e), func(svc *app.Service) error {
		project = svc.Project(contextOf(e))
		return nil
	})
	fmt.Fprintf(e.io.Out, "git-synaptic web: serving %s on %s\n", project, url)
	fmt.Fprintln(e.io.Out, "(only this machine can connect, with the token in the URL; Ctrl-C stops)")
	if o.open {
		if err := exec.Command("xdg-open", url).Start(); err != nil {
			fmt.Fprintf(e.io.Err, "note: could not open a browser (%v); open the URL above\n", err)
		}
	}
	return web.Serve(contextOf(e), ln, srv)
}
