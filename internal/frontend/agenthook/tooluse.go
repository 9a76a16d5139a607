package agenthook

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"

	"github.com/git-synaptic/git-synaptic/internal/app"

	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// toolUse reads a tool call (tool_name and tool_input, in any agent's
// dialect) as the application's ToolUse: the paths it names and, for
// commands and tasks, their description (else a command's first line).
// Contents, edits, patterns and URLs are not kept.
func toolUse(name string, raw json.RawMessage) app.ToolUse {
	var args struct {
		FilePath     string   `json:"file_path"`
		FilePathVS   string   `json:"filePath"` // VS Code
		AbsolutePath string   `json:"absolute_path"`
		NotebookPath string   `json:"notebook_path"`
		Path         string   `json:"path"`
		Files        []string `json:"files"` // VS Code's editFiles
		Command      any      `json:"command"`
		Description  string   `json:"description"`
	}
	_ = json.Unmarshal(raw, &args)
	t := app.ToolUse{Tool: name, What: args.Description}
	var cmd string
	switch c := args.Command.(type) {
	case string:
		cmd = c
	case []any: // Codex's shell takes argv
		var parts []string
		for _, p := range c {
			if s, ok := p.(string); ok {
				parts = append(parts, s)
			}
		}
		cmd = strings.Join(parts, " ")
	}
	patched := patchFiles(cmd)
	if t.What == "" && len(patched) == 0 {
		t.What = cmd
	}
	for _, p := range append([]string{args.FilePath, args.FilePathVS, args.AbsolutePath, args.NotebookPath, args.Path}, append(args.Files, patched...)...) {
		if p != "" {
			t.Files = append(t.Files, p)
		}
	}
	return t
}

// patchFiles are the files a Codex apply_patch names ("*** Update File:
// path" and its kin).
func patchFiles(cmd string) []string {
	if !strings.Contains(cmd, "*** Begin Patch") {
		return nil
	}
	var files []string
	for _, line := range strings.Split(cmd, "\n") {
		for _, p := range []string{"*** Update File: ", "*** Add File: ", "*** Delete File: ", "*** Move to: "} {
			if rest, ok := strings.CutPrefix(strings.TrimSpace(line), p); ok {
				files = append(files, strings.TrimSpace(rest))
			}
		}
	}
	return files
}

// maxTranscriptTail is how much of the end of a transcript is read for
// the agent's last message.
const maxTranscriptTail = 4 << 20

// lastAssistantText is the text of the agent's last message in a
// transcript of JSON lines: Claude Code's {"type":"assistant","message":
// {"content":[{"type":"text","text":...}]}} and Cursor's {"role":
// "assistant","message":{...}}. It is "" when there is none or the file
// cannot be read: the capture then goes without an outcome.
func lastAssistantText(path string) string {
	if path == "" {
		return ""
	}
	f, err := regular.Open(path) // a FIFO would block for good
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return ""
	} else if fi.Size() > maxTranscriptTail {
		if _, err := f.Seek(fi.Size()-maxTranscriptTail, io.SeekStart); err != nil {
			return ""
		}
	}
	var last string
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if text := assistantText(line); text != "" {
			last = text
		}
		if err != nil {
			return last
		}
	}
}

// assistantText is the text of one transcript line if it is an assistant
// message (a partial first line after a seek simply does not parse).
func assistantText(line []byte) string {
	var rec struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &rec) != nil || (rec.Type != "assistant" && rec.Role != "assistant") {
		return ""
	}
	var s string
	if json.Unmarshal(rec.Message.Content, &s) == nil {
		return strings.TrimSpace(s)
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(rec.Message.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			parts = append(parts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(parts, "\n")
}
