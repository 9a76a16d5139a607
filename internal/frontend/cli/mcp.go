package cli

import (
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/frontend/forward"
)

// mcpBinary is the MCP server program, installed beside git-synaptic.
const mcpBinary = "git-synaptic-mcp"

type mcpOptions struct{}

func newMCP(e *env) *cobra.Command {
	o := &mcpOptions{}
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve project memory to coding agents over MCP (stdio only)",
		Long: `Run a Model Context Protocol server on stdin/stdout for a coding agent.
It never listens on a network. Tools: context_save, context_search,
context_list, context_status, context_update, context_pin, context_archive,
context_delete, context_related, context_git_index, context_cochanges,
context_session, context_save_rule, context_list_rules, context_delete_rule,
context_pending_rules, context_accept_rule, context_dismiss_rule,
context_relevant, context_irrelevant, context_resolve_pattern,
context_suggest. Resources: synaptic://context (the session-start context),
synaptic://rules and synaptic://entries/{id}; prompts: consolidate and
review_corrections.
Search results carry provenance (id, age, author, "you"/"teammate"/"git
history"), since teammates' memory is untrusted text in an agent's context.
The server is the git-synaptic-mcp program installed beside git-synaptic.

Claude Code, Codex, Gemini CLI, Cursor, OpenCode, VS Code: git synaptic init
--agent NAME writes the server (and the agent's hooks) into the project's
configuration; by hand, Claude Code's .mcp.json is
  {"mcpServers": {"git-synaptic": {"command": "git-synaptic", "args": ["mcp"]}}}
Other MCP clients: run "git-synaptic mcp" as a stdio server with the
repository as its working directory.`,
		Example: `  git synaptic mcp
  claude mcp add git-synaptic -- git-synaptic mcp`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.run(o, func() error { return runMCP(e, o) })
		},
	}
}

func runMCP(e *env, o *mcpOptions) error {
	path, err := forward.Beside(mcpBinary)
	if err != nil {
		return err
	}
	if e.dir != "." {
		if err := os.Chdir(e.dir); err != nil {
			return err
		}
	}
	if _, err := app.Open(".", app.Options{}); err != nil {
		return err // a clear "not a git repository" before handing over
	}
	return syscall.Exec(path, []string{mcpBinary}, os.Environ())
}
