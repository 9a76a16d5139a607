// Command git-synaptic-mcp is git-synaptic's MCP server on stdio. It is a
// separate binary so that the MCP library's start-up cost (JSON schema
// compilers) and hugot's (the pure-Go embedding runtime) are paid by the
// long-running server only, not by every git-synaptic command and git
// hook; `git synaptic mcp` runs it. With --embed-worker MODEL_DIR it serves
// the CLI's pure-Go embedding instead (package purego).
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/git-synaptic/git-synaptic/embed"
	"github.com/git-synaptic/git-synaptic/embed/purego"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/config"
	"github.com/git-synaptic/git-synaptic/internal/frontend/mcp"
	"github.com/git-synaptic/git-synaptic/memory"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == embed.WorkerFlag {
		if err := purego.Serve(os.Args[2], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "git-synaptic embedding worker:", err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	defer config.CPUProfile()()
	// The session is $GIT_SYNAPTIC_SESSION, else the one the agent's
	// hooks recorded for this worktree (Claude Code tells hooks its
	// session id, not MCP servers), else one made for the server's
	// lifetime, so that the memory saved through it can be listed as a
	// session.
	opts := config.FromEnv(app.Options{Warn: os.Stderr, FollowAgentSession: true, DefaultSession: "mcp-" + memory.NewID()[:12]})
	s, err := app.OpenSession(".", opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "git-synaptic mcp:", err)
		os.Exit(config.ExitCode(err, false))
	}
	defer s.Close()
	in := os.Stdin
	if f, restore := pollable(int(os.Stdin.Fd()), os.Stdin.Name()); f != nil {
		defer restore()
		in = f
	}
	if err := mcp.Serve(ctx, s, config.Version, in, os.Stdout, os.Stderr); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "git-synaptic mcp:", err)
		os.Exit(1)
	}
}
