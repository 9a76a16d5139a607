package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"

	"github.com/git-synaptic/git-synaptic/cache"
	"github.com/git-synaptic/git-synaptic/internal/agents"
	"github.com/git-synaptic/git-synaptic/internal/app"
	"github.com/git-synaptic/git-synaptic/internal/frontend/agenthook"
	"github.com/git-synaptic/git-synaptic/internal/frontend/mcp"
	"github.com/git-synaptic/git-synaptic/memory"
)

// path is one way a question reaches memory.
type path struct {
	name, title string
	kind        string // "search", "mcp" or "hook"
	mode        string // search mode
	limit       int
	raw         bool // the seed weights switched off (reference only)
	dayAfter    bool // the clock set to the day after the conversation
	hook        bool // scored by what the prompt hook injected
}

var allPaths = []path{
	{name: "search", kind: "search", mode: "auto", limit: 10,
		title: "git synaptic search (the product's default: hybrid, 10 results, the seed weights, uses counted)"},
	{name: "search-day-after", kind: "search", mode: "auto", limit: 10, dayAfter: true,
		title: "git synaptic search, asked the day after the conversation (its months of memory from new to old)"},
	{name: "search-bm25", kind: "search", mode: "bm25", limit: 10,
		title: "git synaptic search --mode bm25 (words only, the seed weights)"},
	{name: "mcp", kind: "mcp", mode: "auto", limit: 10,
		title: "MCP context_search (the real server, its default limit of 10; one agent session asks every question)"},
	{name: "hook", kind: "hook", hook: true,
		title: "git synaptic hook prompt (Claude Code's hook JSON, one session per question): evidence inside the injected context"},
	{name: "raw-bm25", kind: "search", mode: "bm25", limit: 50, raw: true,
		title: "reference, weights off: BM25 (FTS5, porter, stopwords dropped), 50 results"},
	{name: "raw-vector", kind: "search", mode: "vector", limit: 50, raw: true,
		title: "reference, weights off: vectors only (cosine), 50 results"},
	{name: "raw-hybrid", kind: "search", mode: "hybrid", limit: 50, raw: true,
		title: "reference, weights off: hybrid, 50 results"},
}

func pathNames() []string {
	var out []string
	for _, p := range allPaths {
		out = append(out, p.name)
	}
	return out
}

// choose picks the paths named in only (all when empty); the reference
// paths need the application in process.
func choose(only string, binary bool) ([]path, error) {
	var out []path
	for _, p := range allPaths {
		if only == "" && binary && (p.raw || p.dayAfter) {
			continue
		}
		if only == "" || strings.Contains(","+only+",", ","+p.name+",") {
			if binary && (p.raw || p.dayAfter) {
				return nil, fmt.Errorf("path %s changes the weights or the clock, which only the in-process run can", p.name)
			}
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no path named %q (want %s)", only, strings.Join(pathNames(), ", "))
	}
	return out, nil
}

// outcome is what one question got: dialogue ids best first (for the
// prompt hook, those injected) and the characters injected.
type outcome struct {
	ranked []string
	chars  int
	items  int // items injected (any memory, not only this conversation's)
}

// conversation is a conversation imported and embedded once into a base
// repository, which each path copies.
type conversation struct {
	base, bin, model string
	asOf             time.Time
	tagOf            map[string]string // entry id → dialogue id
}

func newConversation(ctx context.Context, name string, turns []turn, bin string) (*conversation, error) {
	dir, err := os.MkdirTemp("", "locomo-"+name+"-")
	if err != nil {
		return nil, err
	}
	cv := &conversation{base: dir, bin: bin, tagOf: map[string]string{}}
	if out, err := exec.Command("git", "init", "-q", dir).CombinedOutput(); err != nil {
		cv.close()
		return nil, fmt.Errorf("git init: %v %s", err, out)
	}
	// Each LoCoMo session is a memory session; its turns are saved a
	// second apart in the order they were spoken, as a live session would.
	reqs := make([]app.SaveRequest, len(turns))
	var last time.Time
	for i, t := range turns {
		created, err := time.Parse("3:04 pm on 2 January, 2006", t.DateTime)
		if err != nil {
			cv.close()
			return nil, fmt.Errorf("turn %s: date %q: %w", t.ID, t.DateTime, err)
		}
		created = created.Add(time.Duration(i) * time.Second)
		reqs[i] = app.SaveRequest{Content: t.Speaker + ": " + t.Text, Type: memory.TypeReference, Tags: []string{strings.ToLower(t.ID)},
			Created: created, SessionID: t.Conv + "-session-" + t.Session}
		if created.After(last) {
			last = created
		}
	}
	// The questions are asked the day after the conversation ends: "last
	// year" or "recently" are read against that day (search --as-of).
	cv.asOf = last.Add(24 * time.Hour)
	if bin != "" {
		err = cv.importBinary(ctx, reqs)
	} else {
		err = cv.importInProcess(ctx, reqs)
	}
	if err != nil {
		cv.close()
		return nil, err
	}
	return cv, nil
}

func (cv *conversation) close() { os.RemoveAll(cv.base) }

func (cv *conversation) importInProcess(ctx context.Context, reqs []app.SaveRequest) error {
	s, err := app.Open(cv.base, app.Options{Warn: io.Discard})
	if err != nil {
		return err
	}
	defer s.Close()
	ents, err := s.Memory().Import(ctx, reqs)
	if err != nil {
		return err
	}
	for _, e := range ents {
		cv.tagOf[e.ID] = e.Tags[0]
	}
	st, err := s.Recall().Embed(ctx, nil)
	cv.model = st.ID + " (" + st.Backend + " runtime)"
	return err
}

// copy gives a path its own copy of the base repository.
func (cv *conversation) copy() (string, error) {
	dir, err := os.MkdirTemp("", "locomo-path-")
	if err != nil {
		return "", err
	}
	if out, err := exec.Command("cp", "-a", cv.base+"/.", dir).CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("copy the repository: %v %s", err, out)
	}
	return dir, nil
}

func (cv *conversation) runPath(ctx context.Context, p path, qs []query) ([]outcome, error) {
	dir, err := cv.copy()
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if cv.bin != "" {
		return cv.runBinary(ctx, dir, p, qs)
	}
	opts := app.Options{Warn: io.Discard, AsOf: cv.asOf, RawScores: p.raw}
	if p.dayAfter {
		opts.Now = func() time.Time { return cv.asOf }
	}
	if p.kind == "mcp" {
		// as git-synaptic-mcp opens it
		opts.FollowAgentSession, opts.DefaultSession = true, "mcp-eval"
		sess, err := app.OpenSession(dir, opts)
		if err != nil {
			return nil, err
		}
		defer sess.Close()
		return mcpOutcomes(ctx, cv, sess, qs)
	}
	s, err := app.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	out := make([]outcome, len(qs))
	switch p.kind {
	case "search":
		for i, q := range qs {
			hits, _, err := s.Recall().Search(ctx, app.SearchRequest{Query: q.Question, Filter: app.Filter{Limit: p.limit}, Mode: p.mode})
			if err != nil && err != cache.ErrNoWords {
				return nil, err
			}
			for _, h := range hits {
				out[i].ranked = append(out[i].ranked, cv.tagOf[h.ID])
			}
		}
	case "hook":
		claude, err := agents.Lookup("claude")
		if err != nil {
			return nil, err
		}
		for i, q := range qs {
			var b bytes.Buffer
			in := agenthook.Input{SessionID: fmt.Sprintf("eval-q%d", i), Prompt: q.Question}
			if err := agenthook.Run(ctx, s.Agent(), agenthook.Request{Name: "prompt", Agent: claude, Input: in}, &b); err != nil {
				return nil, err
			}
			if out[i], err = cv.injected(b.Bytes()); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// mcpOutcomes asks each question through context_search of an MCP server
// over sess.
func mcpOutcomes(ctx context.Context, cv *conversation, sess *app.Session, qs []query) ([]outcome, error) {
	out := make([]outcome, len(qs))
	srv := mcp.New(sess, "eval")
	call := func(id int, method string, params any) (json.RawMessage, error) {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		return json.Marshal(srv.HandleMessage(ctx, b))
	}
	if _, err := call(0, "initialize", map[string]any{"protocolVersion": "2025-03-26", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "eval", "version": "0"}}); err != nil {
		return nil, err
	}
	for i, q := range qs {
		resp, err := call(i+1, "tools/call", map[string]any{"name": "context_search", "arguments": map[string]any{"query": q.Question}})
		if err != nil {
			return nil, err
		}
		if out[i].ranked, err = mcpTags(resp); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mcpTags reads the dialogue ids of a context_search reply, in order.
func mcpTags(resp []byte) ([]string, error) {
	var r struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured struct {
				Results []struct {
					Tags []string `json:"tags"`
				} `json:"results"`
			} `json:"structuredContent"`
		} `json:"result"`
		Error *struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(resp, &r); err != nil {
		return nil, fmt.Errorf("context_search reply: %w", err)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("context_search: %s", r.Error.Message)
	}
	if r.Result.IsError {
		if len(r.Result.Content) > 0 && strings.Contains(r.Result.Content[0].Text, cache.ErrNoWords.Error()) {
			return nil, nil
		}
		return nil, fmt.Errorf("context_search: %+v", r.Result.Content)
	}
	var out []string
	for _, x := range r.Result.Structured.Results {
		if len(x.Tags) > 0 {
			out = append(out, x.Tags[0])
		}
	}
	return out, nil
}

// itemID is an injected item's short id: "- [3f2a9c1d · reference · ...".
var itemID = regexp.MustCompile(`(?m)^- \[([0-9a-f]{8}) · `)

// injected reads the dialogue ids of the items a prompt hook's answer
// (Claude Code's hook JSON) injected.
func (cv *conversation) injected(answer []byte) (outcome, error) {
	var o outcome
	if len(bytes.TrimSpace(answer)) == 0 {
		return o, nil // nothing to add
	}
	var r struct {
		Out struct {
			Context string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(answer, &r); err != nil {
		return o, fmt.Errorf("hook answer %q: %w", answer, err)
	}
	o.chars = len(r.Out.Context)
	byShort := map[string]string{}
	for id, tag := range cv.tagOf {
		byShort[app.ShortID(id)] = tag
	}
	for _, m := range itemID.FindAllStringSubmatch(r.Out.Context, -1) {
		o.items++
		if tag, ok := byShort[m[1]]; ok {
			o.ranked = append(o.ranked, tag)
		}
	}
	return o, nil
}
