// Package agenthook is the front end coding agents call through their
// lifecycle hooks (Claude Code first): it reads the agent's hook JSON,
// asks the application for context or a handoff, and writes the answer in
// the agent's format. Like the CLI and the MCP server it holds no business
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

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/notes"
)

// Names are the hooks an agent calls, by the name the CLI takes.
var Names = map[string]bool{"session-start": true, "prompt": true, "tool": true, "stop": true, "pre-compact": true}

// Format is how an answer is written.
type Format string

// Formats.
const (
	Claude   Format = "claude"   // Claude Code's hook JSON
	Markdown Format = "markdown" // the context alone, for other agents
)

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case Claude, Markdown:
		return f, nil
	}
	return "", fmt.Errorf("unknown hook format %q (want claude or markdown)", s)
}

// Input is what an agent passes a hook on stdin (Claude Code's hook JSON);
// other fields are ignored.
type Input struct {
	SessionID string `json:"session_id"`
	Prompt    string `json:"prompt"`
	// PostToolUse: the tool and its arguments.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	// TranscriptPath is the session's transcript (JSON lines), where the
	// stop hook finds the agent's last message.
	TranscriptPath string `json:"transcript_path"`
}

// maxInput bounds the hook JSON read: a PostToolUse of a Write carries
// the whole file.
const maxInput = 64 << 20

// ReadInput reads the hook JSON from r. No input or input that is not
// JSON gives an empty Input: a hook must not fail the agent.
func ReadInput(r io.Reader) Input {
	var in Input
	if r == nil {
		return in
	}
	b, _ := io.ReadAll(io.LimitReader(r, maxInput))
	_ = json.Unmarshal(b, &in)
	return in
}

// Request is one hook call.
type Request struct {
	Name   string // session-start, prompt, tool, stop or pre-compact
	Input  Input
	Budget int // session-start and prompt: characters of context (0: configured)
	Format Format
	// EnvFile is Claude Code's $CLAUDE_ENV_FILE: on session-start the
	// session id is exported there as GIT_SYNAPTIC_SESSION, so that the
	// agent's own git synaptic commands save into its session.
	EnvFile string
}

// Run answers the hook: context on session-start and prompt; on stop,
// the exchange's capture and the session's handoff; on pre-compact, the
// handoff. A tool hook records the call for the exchange's capture. Only
// the context hooks write anything.
func Run(ctx context.Context, a *app.Agent, req Request, out io.Writer) error {
	var md, event string
	// exportErr and captureErr are told after the context is written.
	var err, exportErr, captureErr error
	in := req.Input
	if !notes.ValidName(in.SessionID) {
		return fmt.Errorf("%w: the hook's session_id %q must be a line of at most 256 bytes without control characters", notes.ErrInvalid, in.SessionID)
	}
	switch req.Name {
	case "tool":
		return a.CaptureTool(ctx, in.SessionID, toolUse(in.ToolName, in.ToolInput))
	case "stop":
		_, _, captureErr = a.CaptureExchange(ctx, in.SessionID, lastAssistantText(in.TranscriptPath))
		_, _, err := a.SessionHandoff(ctx, in.SessionID)
		return errors.Join(captureErr, err)
	case "pre-compact":
		_, _, err := a.SessionHandoff(ctx, in.SessionID)
		return err
	case "prompt":
		event = "UserPromptSubmit"
		captureErr = a.CapturePrompt(ctx, in.SessionID, in.Prompt)
		md, err = a.PromptContext(ctx, in.SessionID, in.Prompt, req.Budget)
	case "session-start":
		event = "SessionStart"
		exportErr = exportSession(req.EnvFile, in.SessionID)
		md, err = a.StartSession(ctx, in.SessionID, req.Budget)
	default:
		return fmt.Errorf("unknown agent hook %q", req.Name)
	}
	if err != nil || md == "" {
		return errors.Join(err, exportErr, captureErr)
	}
	if req.Format == Markdown {
		_, err = io.WriteString(out, md)
		return errors.Join(err, exportErr, captureErr)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err = enc.Encode(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "additionalContext": md}})
	return errors.Join(err, exportErr, captureErr)
}

// sessionIDRE is what a session id must look like to be exported to a
// shell: Claude Code's are UUIDs.
var sessionIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// exportSession appends GIT_SYNAPTIC_SESSION=id to the agent's env file
// (a shell fragment the agent sources before its commands).
func exportSession(envFile, id string) error {
	if envFile == "" || !sessionIDRE.MatchString(id) {
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
