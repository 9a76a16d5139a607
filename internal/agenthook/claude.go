package agenthook

import (
	"bufio"
	"encoding/json"
	"io"
	"strings"

	"github.com/git-synaptic/git-synaptic/internal/app"

	"github.com/git-synaptic/git-synaptic/internal/regular"
)

// toolUse reads a Claude Code tool call (PostToolUse's tool_name and
// tool_input) as the application's ToolUse: the paths it names and, for
// commands and tasks, their description (else a command's first line).
// Contents, edits, patterns and URLs are not kept.
func toolUse(name string, raw json.RawMessage) app.ToolUse {
	var args struct {
		FilePath     string `json:"file_path"`
		NotebookPath string `json:"notebook_path"`
		Path         string `json:"path"`
		Command      string `json:"command"`
		Description  string `json:"description"`
	}
	_ = json.Unmarshal(raw, &args)
	t := app.ToolUse{Tool: name, What: args.Description}
	if t.What == "" {
		t.What = args.Command
	}
	for _, p := range []string{args.FilePath, args.NotebookPath, args.Path} {
		if p != "" {
			t.Files = append(t.Files, p)
		}
	}
	return t
}

// maxTranscriptTail is how much of the end of a transcript is read for
// the agent's last message.
const maxTranscriptTail = 4 << 20

// lastAssistantText is the text of the agent's last message in a Claude
// Code transcript (JSON lines of {"type":"assistant","message":{"content":
// [{"type":"text","text":...}]}}), or "" when there is none or the file
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
		Message struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &rec) != nil || rec.Type != "assistant" {
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
