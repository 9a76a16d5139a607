package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/internal/app"
)

// The end-to-end paths: the built binary, as a user or an agent runs it.

// git runs the binary in dir with stdin and returns its standard output.
func (cv *conversation) git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, cv.bin, args...)
	cmd.Dir = dir
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git-synaptic %s: %v: %s", strings.Join(args, " "), err, stderr.String())
	}
	return out, nil
}

// importBinary writes the turns as JSON lines and runs git synaptic
// import and embed.
func (cv *conversation) importBinary(ctx context.Context, reqs []app.SaveRequest) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	for _, r := range reqs {
		if err := enc.Encode(map[string]any{"content": r.Content, "type": r.Type, "tags": r.Tags, "created": r.Created.Format(time.RFC3339), "session_id": r.SessionID}); err != nil {
			return err
		}
	}
	out, err := cv.git(ctx, cv.base, b.Bytes(), "import", "--json", "-")
	if err != nil {
		return err
	}
	var imp struct{ IDs []string }
	if err := json.Unmarshal(out, &imp); err != nil || len(imp.IDs) != len(reqs) {
		return fmt.Errorf("import answered %q (%v)", out, err)
	}
	for i, id := range imp.IDs {
		cv.tagOf[id] = reqs[i].Tags[0]
	}
	if _, err := cv.git(ctx, cv.base, nil, "embed"); err != nil {
		return err
	}
	out, err = cv.git(ctx, cv.base, nil, "model", "status", "--json")
	if err != nil {
		return err
	}
	var st struct{ ID, Backend string }
	_ = json.Unmarshal(out, &st)
	cv.model = st.ID + " (" + st.Backend + " runtime)"
	return nil
}

func (cv *conversation) runBinary(ctx context.Context, dir string, p path, qs []query) ([]outcome, error) {
	out := make([]outcome, len(qs))
	switch p.kind {
	case "search":
		for i, q := range qs {
			res, err := cv.git(ctx, dir, nil, "search", "-n", fmt.Sprint(p.limit), "--mode", p.mode, "--as-of", cv.asOf.Format(time.RFC3339), "--json", "--", q.Question)
			if err != nil {
				if strings.Contains(err.Error(), "no words to search for") {
					continue
				}
				return nil, err
			}
			var hits []struct{ Tags []string }
			if err := json.Unmarshal(res, &hits); err != nil {
				return nil, fmt.Errorf("search --json: %w", err)
			}
			for _, h := range hits {
				if len(h.Tags) > 0 {
					out[i].ranked = append(out[i].ranked, h.Tags[0])
				}
			}
		}
	case "hook":
		for i, q := range qs {
			in, _ := json.Marshal(map[string]string{"session_id": fmt.Sprintf("eval-q%d", i), "prompt": q.Question, "hook_event_name": "UserPromptSubmit", "cwd": dir})
			res, err := cv.git(ctx, dir, in, "hook", "prompt")
			if err != nil {
				return nil, err
			}
			if out[i], err = cv.injected(res); err != nil {
				return nil, err
			}
		}
	case "mcp":
		return cv.mcpBinary(ctx, dir, qs)
	}
	return out, nil
}

// mcpBinary starts `git synaptic mcp` in dir and asks each question with
// context_search over stdio.
func (cv *conversation) mcpBinary(ctx context.Context, dir string, qs []query) ([]outcome, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, cv.bin, "mcp")
	cmd.Dir = dir
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s mcp: %w", filepath.Base(cv.bin), err)
	}
	defer cmd.Wait()
	defer stdin.Close()
	rd := bufio.NewReaderSize(stdout, 1<<20)
	send := func(msg map[string]any) error {
		b, _ := json.Marshal(msg)
		_, err := stdin.Write(append(b, '\n'))
		return err
	}
	recv := func(id int) ([]byte, error) {
		for {
			line, err := rd.ReadBytes('\n')
			if err != nil {
				return nil, fmt.Errorf("mcp server: %w", err)
			}
			var m struct {
				ID *int `json:"id"`
			}
			if json.Unmarshal(line, &m) == nil && m.ID != nil && *m.ID == id {
				return line, nil
			}
		}
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "eval", "version": "0"}}}); err != nil {
		return nil, err
	}
	if _, err := recv(0); err != nil {
		return nil, err
	}
	if err := send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		return nil, err
	}
	out := make([]outcome, len(qs))
	for i, q := range qs {
		if err := send(map[string]any{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": map[string]any{"name": "context_search", "arguments": map[string]any{"query": q.Question}}}); err != nil {
			return nil, err
		}
		resp, err := recv(i + 1)
		if err != nil {
			return nil, err
		}
		if out[i].ranked, err = mcpTags(resp); err != nil {
			return nil, err
		}
	}
	_ = io.Closer(stdin).Close()
	return out, nil
}
