// Package agenthook is the front end coding agents call through their
// lifecycle hooks: it reads the agent's hook JSON, asks the application
// for context or a handoff, and writes the answer in the agent's dialect
// (internal/agents says which). Like the CLI and the MCP server it holds no business
// rules; unlike them it never fails its caller.
package agenthook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
	"sync"

	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Names are the hooks an agent calls, by the name the CLI takes.
var Names = func() map[string]bool {
	m := map[string]bool{}
	for _, e := range agents.Events {
		m[string(e)] = true
	}
	return m
}()

// Input is what an agent passes a hook on stdin: one reading of every
// dialect (Claude Code, Codex and Gemini CLI write snake_case; VS Code
// writes sessionId; Cursor names the session conversation_id). Other
// fields are ignored.
type Input struct {
	SessionID string `json:"session_id"`
	// VSCodeSessionID is VS Code's "sessionId"; CursorConversation is
	// Cursor's "conversation_id".
	VSCodeSessionID    string `json:"sessionId"`
	CursorConversation string `json:"conversation_id"`
	Prompt             string `json:"prompt"`
	// After a tool call: the tool and its arguments.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// TranscriptPath is the session's transcript (JSON lines), where the
	// stop hook finds the agent's last message when the agent does not
	// pass it.
	TranscriptPath string `json:"transcript_path"`
	// The agent's last message, where the stop hook is given it: Codex's
	// last_assistant_message, Gemini CLI's prompt_response.
	LastAssistantMessage string `json:"last_assistant_message"`
	PromptResponse       string `json:"prompt_response"`
	// vscode: the session came as VS Code's sessionId alone.
	vscode bool
}

// session is the session id, whichever field carried it.
func (in Input) session() string {
	for _, s := range []string{in.SessionID, in.VSCodeSessionID, in.CursorConversation} {
		if s != "" {
			return s
		}
	}
	return ""
}

// FromVSCode reports whether the input has VS Code's shape (sessionId,
// not session_id): VS Code also runs the hooks in .claude/settings.json.
func (in Input) FromVSCode() bool { return in.vscode }

// MaxInput bounds the hook JSON read: a PostToolUse of a Write carries
// the whole file.
const MaxInput = 64 << 20

// ReadInput reads the hook JSON from r. No input or input that is not
// JSON gives an empty Input: a hook must not fail the agent.
func ReadInput(r io.Reader) Input {
	var in Input
	if r == nil {
		return in
	}
	b, _ := io.ReadAll(io.LimitReader(r, MaxInput))
	_ = json.Unmarshal(b, &in)
	in.vscode = in.SessionID == "" && in.VSCodeSessionID != ""
	in.SessionID = in.session()
	return in
}

// Request is one hook call.
type Request struct {
	Name  string       // session-start, prompt, tool, stop or pre-compact
	Agent agents.Agent // whose dialect the answer is written in
	Input Input
	// Budget: session-start and prompt: characters of context (0:
	// configured).
	Budget int
	// Markdown prints the context alone, for an agent or a script that
	// reads plain text.
	Markdown bool
	// EnvFile is Claude Code's $CLAUDE_ENV_FILE: on session-start the
	// session id is exported there as GIT_SYNAPTIC_SESSION, so that the
	// agent's own git synaptic commands save into its session.
	EnvFile string
}

// Run answers the hook: context on session-start and prompt; on stop,
// the exchange's capture and the session's handoff; on pre-compact, the
// handoff. A tool hook records the call for the exchange's capture. The
// answer is written in the agent's dialect.
func Run(ctx context.Context, a *app.Agent, req Request, out io.Writer) error {
	var md string
	// exportErr and captureErr are told after the answer is written.
	var err, exportErr, captureErr error
	in := req.Input
	event := agents.Event(req.Name)
	if !event.Valid() {
		return fmt.Errorf("unknown agent hook %q", req.Name)
	}
	if !memory.ValidName(in.SessionID) {
		err := memory.Invalidf("the hook's session_id %q must be a line of at most 256 bytes without control characters", in.SessionID)
		return errors.Join(err, write(out, req, event, "", ""))
	}
	switch event {
	case agents.Tool:
		err = a.CaptureTool(ctx, in.SessionID, toolUse(in.ToolName, in.ToolInput))
	case agents.Stop:
		outcome := in.LastAssistantMessage
		if outcome == "" {
			outcome = in.PromptResponse
		}
		if outcome == "" {
			outcome = lastAssistantText(in.TranscriptPath)
		}
		_, _, captureErr = a.CaptureExchange(ctx, in.SessionID, strings.TrimSpace(outcome))
		_, _, err = a.SessionHandoff(ctx, in.SessionID)
	case agents.PreCompact:
		_, _, err = a.SessionHandoff(ctx, in.SessionID)
	case agents.Prompt:
		captureErr = a.CapturePrompt(ctx, in.SessionID, in.Prompt)
		if req.Agent.Context[agents.Prompt] || req.Markdown {
			md, err = a.PromptContext(ctx, in.SessionID, in.Prompt, req.Budget)
		}
	case agents.SessionStart:
		exportErr = exportSession(req.EnvFile, in.SessionID)
		md, err = a.StartSession(ctx, in.SessionID, req.Budget)
	}
	return errors.Join(err, write(out, req, event, in.SessionID, md), exportErr, captureErr)
}

// write prints the answer: the context alone (markdown), or the agent's
// JSON, which an agent that parses every hook's output gets even when
// there is nothing to say or the hook failed.
func write(out io.Writer, req Request, e agents.Event, session, md string) error {
	if req.Markdown {
		_, err := io.WriteString(out, md)
		return err
	}
	answer := reply(req.Agent, e, session, md)
	if answer == nil {
		return nil
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(answer)
}

// reply is the hook's answer in the agent's dialect, or nil for none.
func reply(ag agents.Agent, e agents.Event, session, md string) any {
	if md != "" && ag.Context[e] {
		switch ag.Output {
		case agents.SnakeCase: // Cursor's sessionStart
			r := map[string]any{"additional_context": md}
			if sessionIDRE().MatchString(session) {
				r["env"] = map[string]string{"GIT_SYNAPTIC_SESSION": session}
			}
			return r
		default:
			return map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": ag.Hooks[e], "additionalContext": md}}
		}
	}
	if !ag.JSONAlways {
		return nil
	}
	if ag.Output == agents.SnakeCase && e == agents.Prompt {
		return map[string]any{"continue": true} // Cursor's beforeSubmitPrompt: let it through
	}
	return map[string]any{}
}

// sessionIDRE is what a session id must look like to be exported to a
// shell: Claude Code's are UUIDs.
var sessionIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`) })

// exportSession appends GIT_SYNAPTIC_SESSION=id to the agent's env file
// (a shell fragment the agent sources before its commands).
func exportSession(envFile, id string) error {
	if envFile == "" || !sessionIDRE().MatchString(id) {
		return nil
	}
	f, err := os.OpenFile(envFile, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("export the session id: %w", err)
	}
	_, err = fmt.Fprintf(f, "export GIT_SYNAPTIC_SESSION=%s\n", id)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
