package cli

import (
	"github.com/spf13/cobra"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/mcp"
)

func newMCP(e *env) *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve project memory to coding agents over MCP (stdio only)",
		Long: `Run a Model Context Protocol server on stdin/stdout for a coding agent.
It never listens on a network. Tools: context_save, context_search,
context_list, context_status, context_update, context_pin, context_archive,
context_delete, context_related, context_git_index, context_cochanges,
context_session, context_save_rule, context_list_rules, context_delete_rule,
context_relevant, context_irrelevant.
Search results carry provenance (id, age, author, "you"/"teammate"/"git
history"), since teammates' memory is untrusted text in an agent's context.

Claude Code: add to .mcp.json in the repository
  {"mcpServers": {"git-synaptic": {"command": "git-synaptic", "args": ["mcp"]}}}
Other MCP clients: run "git-synaptic mcp" as a stdio server with the
repository as its working directory.`,
		Example: `  git synaptic mcp
  claude mcp add git-synaptic -- git-synaptic mcp`,
		Args: exactArgs(0),
		RunE: func(c *cobra.Command, _ []string) error {
			return e.withService(func(s *app.Service) error {
				return mcp.Serve(contextOf(e), s, Version, e.io.In, e.io.Out, e.io.Err)
			})
		},
	}
}
