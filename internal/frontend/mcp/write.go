package mcp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/memory"
)

func (h *request) relevant(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	op, err := h.svc.Memory().Feedback(ctx, id, true, r.GetFloat("score", 1), r.GetString("reason", ""), r.GetString("objective", ""))
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText(fmt.Sprintf("marked %s relevant (%.2f)", op.Entry, op.Score)), nil
}

func (h *request) irrelevant(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	op, err := h.svc.Memory().Feedback(ctx, id, false, 0, r.GetString("reason", ""), "")
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText("marked " + op.Entry + " irrelevant"), nil
}

func (h *request) save(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	content, err := r.RequireString("content")
	if err != nil {
		return nil, err
	}
	req := app.SaveRequest{Content: content, Type: memory.Type(r.GetString("type", "insight")), Tags: r.GetStringSlice("tags", nil),
		Tier: memory.Tier(r.GetString("tier", "")), Pinned: r.GetBool("pinned", false), Private: r.GetBool("private", false),
		Related: r.GetStringSlice("related_ids", nil), AgentID: r.GetString("agent_id", cmp.Or(h.svc.AgentID(), "main"))}
	// the server keeps the model loaded, so near-duplicates are found by
	// meaning; they are reported, never dropped, and linked (but not one
	// in private memory from a shared entry)
	saved, err := h.svc.Memory().SaveLinked(ctx, req, app.ByMeaning)
	if err != nil {
		return nil, err
	}
	e := saved.Entry
	var dupIDs []string
	text := ""
	for _, d := range saved.Duplicates {
		dupIDs = append(dupIDs, d.ID)
		how := "linked"
		if !saved.Linked(d.ID) {
			how = "not linked (private memory, and this entry is shared)"
		}
		text += fmt.Sprintf("\nnear-duplicate of %s (%s similarity %.2f), %s: %s", app.ShortID(d.ID), d.How, d.Similarity, how, app.FirstLine(d.Content, 80))
	}
	tier := e.Tier
	if tier == "" {
		tier = memory.DefaultTier(e.Type)
	}
	out := map[string]any{"id": e.ID, "type": e.Type, "tier": tier}
	if len(dupIDs) > 0 {
		out["near_duplicates"] = dupIDs
	}
	if p := saved.Pattern; p != nil {
		out["pattern_detected"] = map[string]any{"id": p.ID, "count": len(p.Entries), "since": p.Since}
		text += "\n" + app.PatternLabel(*p) + ": a recurring issue; fix the cause, then context_resolve_pattern"
	}
	return mcpgo.NewToolResultStructured(out, fmt.Sprintf("saved %s %s", e.Type, e.ID)+text), nil
}

func (h *request) resolvePattern(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	g, err := h.svc.Memory().ResolvePattern(ctx, id)
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultStructured(map[string]any{"pattern": g.ID, "issues": len(g.Entries)},
		fmt.Sprintf("resolved pattern %s (%d issues)", app.ShortID(g.ID), len(g.Entries))), nil
}

func (h *request) update(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	req := app.EditRequest{Type: memory.Type(r.GetString("type", "")), AddTags: r.GetStringSlice("add_tags", nil), RemoveTags: r.GetStringSlice("remove_tags", nil)}
	if c := r.GetString("content", ""); c != "" {
		req.Content = &c
	}
	op, err := h.svc.Memory().Edit(ctx, id, req)
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText("updated " + op.Entry), nil
}

func (h *request) pin(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	op, err := h.svc.Memory().SetPinned(ctx, id, r.GetBool("pinned", true))
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText(string(op.Kind) + " " + op.Entry), nil
}

func (h *request) archive(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	ids, err := r.RequireStringSlice("ids")
	if err != nil {
		return nil, err
	}
	done, pinned := []string{}, []string{}
	for _, id := range ids {
		op, err := h.svc.Memory().ArchiveUnpinned(ctx, id)
		switch {
		case errors.Is(err, app.ErrPinned):
			pinned = append(pinned, id)
			continue
		case err != nil:
			return nil, fmt.Errorf("%s: %w (archived so far: %s)", id, err, strings.Join(done, ", "))
		}
		done = append(done, op.Entry)
	}
	text := "archived " + strings.Join(done, ", ")
	if len(done) == 0 {
		text = "archived nothing"
	}
	if len(pinned) > 0 {
		text += "; skipped pinned " + strings.Join(pinned, ", ") + " (a pin is the user's: ask them, or unpin first)"
	}
	return mcpgo.NewToolResultStructured(map[string]any{"archived": done, "skipped_pinned": pinned}, text), nil
}

func (h *request) delete(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	id, err := r.RequireString("id")
	if err != nil {
		return nil, err
	}
	op, err := h.svc.Memory().ArchiveUnpinned(ctx, id)
	if errors.Is(err, app.ErrPinned) {
		return nil, fmt.Errorf("%s is pinned: a pin is the user's decision; ask them, or unpin it first (context_pin with pinned false)", id)
	}
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultText("deleted " + op.Entry + " (archived; git history keeps it)"), nil
}
