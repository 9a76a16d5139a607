package mcp

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/internal/app"
)

func (h *handlers) gitIndex(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	rep, err := h.svc.Code().Index(ctx, app.IndexOptions{All: r.GetBool("all", false)})
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultStructured(rep, fmt.Sprintf("indexed %d new commits (%d walked)", rep.Indexed, rep.Seen)), nil
}

func (h *handlers) cochanges(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	file, err := r.RequireString("file")
	if err != nil {
		return nil, err
	}
	list, commits, err := h.svc.Code().Cochanges(ctx, file, "", r.GetInt("limit", 10), nil)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s changed in %d indexed commits", file, commits)
	if len(list) > 0 {
		b.WriteString("; files that usually change with it:")
	}
	for _, s := range list {
		fmt.Fprintf(&b, "\n- %s (%d times, %.0f%% of its commits, last %s)", s.File, s.Count, 100*s.Confidence, s.Last.Format("2006-01-02"))
	}
	if list == nil {
		list = []cochange.Suggestion{}
	}
	return mcpgo.NewToolResultStructured(map[string]any{"file": file, "commits": commits, "cochanges": list}, b.String()), nil
}
