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
)

// Names are the hooks an agent calls, by the name the CLI takes.
var Names = map[string]bool{"session-start": true, "prompt": true, "stop": true, "pre-compact": true}

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
}

// ReadInput reads the hook JSON from r (at most 1 MiB). No input or input
// that is not JSON gives an empty Input: a hook must not fail the agent.
func ReadInput(r io.Reader) Input {
	var in Input
	if r == nil {
		return in
	}
	b, _ := io.ReadAll(io.LimitReader(r, 1<<20))
	_ = json.Unmarshal(b, &in)
	return in
}

// Request is one hook call.
type Request struct {
	Name   string // session-start, prompt, stop or pre-compact
	Input  Input
	Budget int // session-start and prompt: characters of context (0: configured)
	Format Format
	// EnvFile is Claude Code's $CLAUDE_ENV_FILE: on session-start the
	// session id is exported there as GIT_SYNAPTIC_SESSION, so that the
	// agent's own git synaptic commands save into its session.
	EnvFile string
}

// Run answers the hook: a handoff on stop and pre-compact (nothing is
// written), context on session-start and prompt.
func Run(ctx context.Context, a *app.Agent, req Request, out io.Writer) error {
	var md, event string
	var err, exportErr error
	switch req.Name {
	case "stop", "pre-compact":
		_, _, err := a.SessionHandoff(ctx, req.Input.SessionID)
		return err
	case "prompt":
		event = "UserPromptSubmit"
		md, err = a.PromptContext(ctx, req.Input.SessionID, req.Input.Prompt, req.Budget)
	case "session-start":
		event = "SessionStart"
		exportErr = exportSession(req.EnvFile, req.Input.SessionID) // told after the context
		md, err = a.StartSession(ctx, req.Input.SessionID, req.Budget)
	default:
		return fmt.Errorf("unknown agent hook %q", req.Name)
	}
	if err != nil || md == "" {
		return errors.Join(err, exportErr)
	}
	if req.Format == Markdown {
		_, err = io.WriteString(out, md)
		return errors.Join(err, exportErr)
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	err = enc.Encode(map[string]any{"hookSpecificOutput": map[string]any{"hookEventName": event, "additionalContext": md}})
	return errors.Join(err, exportErr)
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
