package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

func (h *handlers) saveRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	label, err := r.RequireString("label")
	if err != nil {
		return nil, err
	}
	content, err := r.RequireString("content")
	if err != nil {
		return nil, err
	}
	rule, err := h.svc.Agent().SaveRule(ctx, label, content, "mcp")
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultStructured(map[string]any{"id": rule.ID, "label": rule.Label}, "saved rule "+rule.Label+" as "+rule.ID), nil
}

func (h *handlers) listRules(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
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

func (h *handlers) deleteRule(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
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
