package mcp

import (
	"context"
	"fmt"
	"strings"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/git-synaptic/git-synaptic/cochange"
	"github.com/git-synaptic/git-synaptic/internal/app"
)

func (h *request) gitIndex(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	if p := r.GetString("repo_path", ""); p != "" && !h.svc.IsRepository(p) {
		return nil, app.Invalidf("repo_path %s is not this server's repository (%s); start a server in that repository", p, h.svc.Root())
	}
	opt := app.IndexOptions{All: r.GetBool("all", false), Branch: r.GetString("branch", "")}
	if d := r.GetFloat("days", 0); d > 0 {
		opt.Since = h.svc.Now().Add(-time.Duration(d * float64(24*time.Hour)))
	} else if d < 0 {
		return nil, app.Invalidf("days must be positive")
	}
	rep, err := h.svc.Code().Index(ctx, opt)
	if err != nil {
		return nil, err
	}
	return mcpgo.NewToolResultStructured(rep, fmt.Sprintf("indexed %d new commits (%d walked)", rep.Indexed, rep.Seen)), nil
}

func (h *request) cochanges(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	file, err := r.RequireString("file")
	if err != nil {
		return nil, err
	}
	limit := r.GetInt("limit", 10)
	if limit < 1 || limit > maxCochanges {
		return nil, app.Invalidf("limit %d: give 1 to %d", limit, maxCochanges)
	}
	code, err := h.svc.CodeOf(r.GetString("project", ""))
	if err != nil {
		return nil, err
	}
	found, commits, err := code.Cochanges(ctx, file, "", limit, nil)
	if err != nil {
		return nil, err
	}
	// files ranked only by name or directory changed with it in no commit
	list := []cochange.Suggestion{}
	for _, s := range found {
		if s.Count > 0 {
			list = append(list, s)
		}
	}
	var b strings.Builder
	if commits > 0 {
		fmt.Fprintf(&b, "%s changed in %d indexed commits", file, commits)
	} else {
		why, err := code.NoCochanges(ctx, file)
		if err != nil {
			return nil, err
		}
		b.WriteString(why)
	}
	if len(list) > 0 {
		b.WriteString("; files that usually change with it:")
	}
	writeSuggestions(&b, list, "its")
	return mcpgo.NewToolResultStructured(map[string]any{"file": file, "commits": commits, "cochanges": list}, b.String()), nil
}

func (h *request) suggest(ctx context.Context, r mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
	limit := r.GetInt("limit", 10)
	if limit < 1 || limit > maxCochanges {
		return nil, app.Invalidf("limit %d: give 1 to %d", limit, maxCochanges)
	}
	changed, list, err := h.svc.Code().Suggest(ctx, app.SuggestRequest{Files: r.GetStringSlice("files", nil), Staged: r.GetBool("staged", false), N: limit})
	if err != nil {
		return nil, err
	}
	changed, list = append([]string{}, changed...), append([]cochange.Suggestion{}, list...) // [] in JSON, not null
	var b strings.Builder
	switch {
	case len(changed) == 0:
		b.WriteString("no changed files (pass files)")
	case len(list) == 0:
		fmt.Fprintf(&b, "changed: %s; no suggestions: these files have no co-change history", strings.Join(changed, ", "))
	default:
		fmt.Fprintf(&b, "changed: %s; these usually change too:", strings.Join(changed, ", "))
	}
	writeSuggestions(&b, list, "the changed file's")
	return mcpgo.NewToolResultStructured(map[string]any{"changed": changed, "suggestions": list}, b.String()), nil
}

// writeSuggestions lists co-change suggestions, one line each; whose
// names the files the confidence is a share of the commits of.
func writeSuggestions(b *strings.Builder, list []cochange.Suggestion, whose string) {
	for _, s := range list {
		if s.Count == 0 {
			fmt.Fprintf(b, "\n- %s (no shared commit: same name or directory)", s.File)
			continue
		}
		fmt.Fprintf(b, "\n- %s (%d times, %.0f%% of %s commits, last %s)", s.File, s.Count, 100*s.Confidence, whose, s.Last.Format("2006-01-02"))
	}
}

// maxCochanges bounds context_cochanges' limit.
const maxCochanges = 50
