package app

import (
	"context"
	"fmt"

	"github.com/git-synaptic/git-synaptic/internal/capture"
	"github.com/git-synaptic/git-synaptic/memory"
)

// Automatic capture keeps a short private record of each agent exchange
// (internal/capture): the hooks record the prompt and each tool call, and
// the stop hook saves the exchange as one ephemeral entry, which decays by
// the usual rules. Captures are private memory (PrivateRef, never
// pushed): they record one person's session, not the team's knowledge.

// CaptureKey is the git config switch for automatic capture (default on).
const CaptureKey = "synaptic.capture"

// CaptureTag tags captured exchanges; ChangesTag marks those whose tools
// changed something (files written or edited, commands run).
const (
	CaptureTag = "auto-capture"
	ChangesTag = "changes"
)

// ToolUse is one tool call an agent made, as its hook reports it.
type ToolUse = capture.ToolUse

// CapturePrompt records the agent's prompt as the start of an exchange.
func (s *Agent) CapturePrompt(ctx context.Context, sessionID, prompt string) error {
	return s.capture.Prompt(ctx, sessionID, prompt)
}

// CaptureTool records one tool call of the current exchange.
func (s *Agent) CaptureTool(ctx context.Context, sessionID string, t ToolUse) error {
	return s.capture.Tool(ctx, sessionID, t)
}

// CaptureExchange folds the exchange recorded since the last one into a
// private, ephemeral progress entry, with outcome (the agent's last
// message, may be "") as what came of it. It reports the entry and
// whether it saved one: nothing is saved when capture is off or nothing
// was recorded.
func (s *Agent) CaptureExchange(ctx context.Context, sessionID, outcome string) (memory.Entry, bool, error) {
	content, changed, err := s.capture.Take(ctx, sessionID, outcome)
	if err != nil || content == "" {
		return memory.Entry{}, false, err
	}
	tags := []string{CaptureTag}
	if changed {
		tags = append(tags, ChangesTag)
	}
	// progress is ephemeral by type; an explicit tier would never decay
	e, err := s.memory().Save(ctx, SaveRequest{Content: content, Type: memory.TypeProgress, Private: true, Tags: tags, SessionID: sessionID})
	if err != nil {
		return e, false, fmt.Errorf("capture: %w", err)
	}
	return e, true, nil
}

// captureOn reports whether automatic capture is on (git config
// synaptic.capture, default true).
func (s *core) captureOn(ctx context.Context) bool {
	on, set, err := s.repo.ConfigBool(ctx, CaptureKey)
	return err == nil && (on || !set)
}
