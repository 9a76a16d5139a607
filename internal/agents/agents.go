// Package agents is what git-synaptic knows about each coding agent it
// serves: the agent's own names for the lifecycle events it hooks and the
// shape in which it reads a hook's answer. The hook front end
// (internal/frontend/agenthook) speaks these dialects; the setup (internal/agentsetup)
// writes each agent's configuration from the same table.
package agents

import (
	"fmt"
	"sort"
	"strings"
)

// Event is one of git-synaptic's agent hooks, by the name the CLI takes
// (git synaptic hook NAME).
type Event string

// The events, in the order of a session.
const (
	SessionStart Event = "session-start" // context for a new session
	Prompt       Event = "prompt"        // context for one prompt; the prompt is captured
	Tool         Event = "tool"          // after a tool call: noted for the capture
	Stop         Event = "stop"          // end of a turn: capture, then the handoff
	PreCompact   Event = "pre-compact"   // before the agent compacts its context: the handoff
)

// Events lists every event.
var Events = []Event{SessionStart, Prompt, Tool, Stop, PreCompact}

// Valid reports whether e is one of the events.
func (e Event) Valid() bool {
	for _, x := range Events {
		if x == e {
			return true
		}
	}
	return false
}

// Output is how an agent reads a hook's answer on stdout.
type Output int

// The answer shapes.
const (
	// HookSpecific: {"hookSpecificOutput": {"hookEventName": E,
	// "additionalContext": text}} (Claude Code, Codex, Gemini CLI, VS Code).
	HookSpecific Output = iota
	// SnakeCase: {"additional_context": text, "env": {...}} on sessionStart
	// (Cursor).
	SnakeCase
)

// Agent is one coding agent.
type Agent struct {
	Name  string // as init --agent and hook --agent take it
	Title string // as people call it
	// Hooks maps each event the agent has a hook for to the agent's own
	// name for it. An event it lacks is covered by its instruction file.
	Hooks map[Event]string
	// Context lists the events whose answer the agent adds to the
	// model's context.
	Context map[Event]bool
	Output  Output
	// JSONAlways: the agent parses stdout as JSON on every hook, so a hook
	// with nothing to say prints {} rather than nothing.
	JSONAlways bool
}

// HasHook reports whether the agent has a hook for e.
func (a Agent) HasHook(e Event) bool { _, ok := a.Hooks[e]; return ok }

// All is every agent git-synaptic can be set up for.
var All = []Agent{
	{
		// https://code.claude.com/docs/en/hooks
		Name: "claude", Title: "Claude Code",
		Hooks: map[Event]string{SessionStart: "SessionStart", Prompt: "UserPromptSubmit", Tool: "PostToolUse", Stop: "Stop", PreCompact: "PreCompact"},
		// Context: both context hooks.
		Context: map[Event]bool{SessionStart: true, Prompt: true},
		Output:  HookSpecific,
	},
	{
		// https://developers.openai.com/codex/hooks (schemas:
		// openai/codex codex-rs/hooks/schema/generated/*.json)
		Name: "codex", Title: "Codex CLI",
		Hooks:   map[Event]string{SessionStart: "SessionStart", Prompt: "UserPromptSubmit", Tool: "PostToolUse", Stop: "Stop", PreCompact: "PreCompact"},
		Context: map[Event]bool{SessionStart: true, Prompt: true},
		Output:  HookSpecific,
	},
	{
		// https://geminicli.com/docs/hooks/reference
		Name: "gemini", Title: "Gemini CLI",
		Hooks:      map[Event]string{SessionStart: "SessionStart", Prompt: "BeforeAgent", Tool: "AfterTool", Stop: "AfterAgent", PreCompact: "PreCompress"},
		Context:    map[Event]bool{SessionStart: true, Prompt: true},
		Output:     HookSpecific,
		JSONAlways: true, // "stdout is parsed as JSON"
	},
	{
		// https://cursor.com/docs/agent/hooks: beforeSubmitPrompt can
		// only allow or block a prompt, so prompt-time context comes from
		// the rule file init writes.
		Name: "cursor", Title: "Cursor",
		Hooks:      map[Event]string{SessionStart: "sessionStart", Prompt: "beforeSubmitPrompt", Tool: "postToolUse", Stop: "stop", PreCompact: "preCompact"},
		Context:    map[Event]bool{SessionStart: true},
		Output:     SnakeCase,
		JSONAlways: true,
	},
	{
		// https://opencode.ai/docs/mcp-servers, https://opencode.ai/docs/rules:
		// no command hooks (only JavaScript plugins), so the MCP server
		// and AGENTS.md.
		Name: "opencode", Title: "OpenCode",
		Hooks: map[Event]string{},
	},
	{
		// https://code.visualstudio.com/docs/agent-customization/hooks
		// (GitHub Copilot agent mode): UserPromptSubmit takes the common
		// output only, so prompt-time context comes from the instructions.
		Name: "vscode", Title: "VS Code (GitHub Copilot)",
		Hooks:   map[Event]string{SessionStart: "SessionStart", Prompt: "UserPromptSubmit", Tool: "PostToolUse", Stop: "Stop", PreCompact: "PreCompact"},
		Context: map[Event]bool{SessionStart: true},
		Output:  HookSpecific,
	},
}

// Names lists the agents' names.
func Names() []string {
	var n []string
	for _, a := range All {
		n = append(n, a.Name)
	}
	return n
}

// Lookup finds an agent by name (case-insensitive).
func Lookup(name string) (Agent, error) {
	for _, a := range All {
		if strings.EqualFold(a.Name, name) {
			return a, nil
		}
	}
	known := Names()
	sort.Strings(known)
	return Agent{}, fmt.Errorf("unknown agent %q (known: %s, or auto)", name, strings.Join(known, ", "))
}
