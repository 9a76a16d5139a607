package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/git-synaptic/git-synaptic/notes"
)

// mcpServerEntry is how an MCP client starts git-synaptic's server.
var mcpServerEntry = map[string]any{"command": "git-synaptic", "args": []any{"mcp"}}

// ConfigureAgent registers the MCP server with a coding agent's project
// configuration. For "claude" it adds git-synaptic to .mcp.json at the top
// of the working tree, keeping every other server and key as it was. It
// reports what it changed ("" when nothing).
func (s *Service) ConfigureAgent(agent string) (string, error) {
	if agent != "claude" {
		return "", fmt.Errorf("%w: unknown agent %q (supported: claude; other MCP clients: run 'git-synaptic mcp' as a stdio server)", notes.ErrInvalid, agent)
	}
	if s.repo.WorkTree() == "" {
		return "", fmt.Errorf("%w: a bare repository has no working tree for .mcp.json", notes.ErrInvalid)
	}
	path := filepath.Join(s.repo.WorkTree(), ".mcp.json")
	doc := map[string]any{}
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return "", err
	default:
		if err := json.Unmarshal(b, &doc); err != nil {
			return "", fmt.Errorf("%w: %s is not valid JSON (%v); fix it or move it aside, nothing was changed", notes.ErrInvalid, path, err)
		}
	}
	servers, _ := doc["mcpServers"].(map[string]any)
	if servers == nil {
		if _, exists := doc["mcpServers"]; exists {
			return "", fmt.Errorf("%w: %s: mcpServers is not an object; nothing was changed", notes.ErrInvalid, path)
		}
		servers = map[string]any{}
	}
	if cur, ok := servers["git-synaptic"]; ok {
		a, _ := json.Marshal(cur)
		w, _ := json.Marshal(mcpServerEntry)
		if bytes.Equal(a, w) {
			return "", nil
		}
	}
	servers["git-synaptic"] = mcpServerEntry
	doc["mcpServers"] = servers
	out, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return "", err
	}
	tmp := path + ".tmp-synaptic"
	if err := os.WriteFile(tmp, append(out, '\n'), 0o644); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return "", err
	}
	return "mcp server git-synaptic added to " + path, nil
}
