package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

func (h *request) saveRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	label, err := r.RequireString("label")
	if err != nil {
		return nil, err
	}
	content, err := r.RequireString("content")
	if err != nil {
		return nil, err
	}
	corr := r.GetString("correction_id", "")
	rule, err := h.svc.Agent().SaveRule(ctx, app.RuleRequest{Label: label, Content: content, AgentID: "mcp", Correction: corr})
	if err != nil {
		return nil, err
	}
	text := "saved rule " + rule.Label + " as " + rule.ID
	if corr != "" {
		text += "; correction " + corr + " accepted"
	}
	return mcpgo.NewToolResultStructured(map[string]any{"id": rule.ID, "label": rule.Label}, text), nil
}

func (h *request) pendingRules(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	list, err := h.svc.Agent().PendingRules(ctx)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return mcpgo.NewToolResultText("no pending rules"), nil
	}
	head := fmt.Sprintf("%d corrections waiting to become rules (accept with context_accept_rule, or context_dismiss_rule):\n", len(list))
	return mcpgo.NewToolResultText(head + h.pendingText(ctx, list)), nil
}

func (h *request) acceptRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	rule, err := h.svc.Agent().AcceptRule(ctx, id, r.GetString("label", ""))
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultStructured(map[string]any{"id": rule.ID, "label": rule.Label, "correction": id}, "accepted: rule "+rule.ID), nil
}

func (h *request) dismissRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	op, err := h.svc.Agent().DismissRule(ctx, id)
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText("dismissed correction " + op.Entry + " (not a rule)"), nil
}

func (h *request) listRules(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	rules, err := h.svc.Agent().Rules(ctx, 0)
	if err != nil {
		return nil, err
	}
	rows := make([]app.Entry, len(rules))
	for i, r := range rules {
		rows[i] = r.Entry
	}
	return h.rowsResult(ctx, rows, fmt.Sprintf("%d rules (labels are the rule: tags)", len(rows))), nil
}

func (h *request) deleteRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	which, err := r.RequireString("rule")
	if err != nil {
		return nil, err
	}
	ids, err := h.svc.Agent().DeleteRules(ctx, which)
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText("deleted rule " + strings.Join(ids, ", ") + " (archived; git history keeps it)"), nil
}
