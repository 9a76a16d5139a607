package agentsetup

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// Plain-text edits: a marked block in a Markdown instruction file or in
// Codex's TOML configuration, which init rewrites and --remove takes out.

const (
	mdBegin = "<!-- >>> git-synaptic: written by git synaptic init --agent %s; init rewrites this block, init --agent %s --remove takes it out -->"
	mdEnd   = "<!-- <<< git-synaptic -->"
	// tomlMark ends the lines init adds to a table the user already has.
	tomlMark  = "# added by git synaptic init --agent codex"
	tomlBegin = "# >>> git-synaptic: written by git synaptic init --agent codex; init --agent codex --remove takes it out"
	tomlEnd   = "# <<< git-synaptic"
)

// blockSpan finds a marked block: the offsets of its first line and just
// past its last line (newline included), or -1.
func blockSpan(text, beginPrefix, end string) (int, int) {
	b := strings.Index(text, beginPrefix)
	if b < 0 || (b > 0 && text[b-1] != '\n') {
		return -1, -1
	}
	e := strings.Index(text[b:], end)
	if e < 0 {
		return -1, -1
	}
	e += b + len(end)
	if e < len(text) && text[e] == '\n' {
		e++
	}
	return b, e
}

// putBlock writes block (which ends in a newline) into text: in place of
// the marked block there, else at the end after a blank line.
func putBlock(text, beginPrefix, end, block string) string {
	if b, e := blockSpan(text, beginPrefix, end); b >= 0 {
		return text[:b] + block + text[e:]
	}
	switch {
	case text == "":
	case strings.HasSuffix(text, "\n\n"):
	case strings.HasSuffix(text, "\n"):
		text += "\n"
	default:
		text += "\n\n"
	}
	return text + block
}

// dropBlock takes the marked block out, with the blank line put before
// it; it reports whether there was one.
func dropBlock(text, beginPrefix, end string) (string, bool) {
	b, e := blockSpan(text, beginPrefix, end)
	if b < 0 {
		return text, false
	}
	before := text[:b]
	if e == len(text) && strings.HasSuffix(before, "\n\n") {
		before = before[:len(before)-1]
	}
	return before + text[e:], true
}

// markdownBlock is an instruction file's block for agent.
func markdownBlock(agent, body string) string {
	return fmt.Sprintf(mdBegin, agent, agent) + "\n" + body + mdEnd + "\n"
}

// mdBeginPrefix is what every init's block starts with, whichever agent
// wrote it.
const mdBeginPrefix = "<!-- >>> git-synaptic:"

var (
	tomlHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*\[\[?[ \t]*([^\]]*?)[ \t]*\]\]?[ \t]*(#.*)?$`)
	})
	tomlCodexHooks   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*codex_hooks[ \t]*=[ \t]*(\w+)`) })
	tomlDottedFeat   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^[ \t]*features\.codex_hooks[ \t]*=[ \t]*(\w+)`) })
	tomlServerHeader = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?m)^[ \t]*\[[ \t]*mcp_servers\.("git-synaptic"|'git-synaptic'|git-synaptic)[ \t]*\]`)
	})
)

// tomlTable is the body of the table named name (from after its header
// line to the next header), as offsets, or -1.
func tomlTable(text, name string) (int, int) {
	hs := tomlHeader().FindAllStringSubmatchIndex(text, -1)
	for i, h := range hs {
		if strings.TrimSpace(text[h[2]:h[3]]) != name || strings.HasPrefix(strings.TrimSpace(text[h[0]:h[1]]), "[[") {
			continue
		}
		start := h[1]
		if start < len(text) && text[start] == '\n' {
			start++
		}
		end := len(text)
		if i+1 < len(hs) {
			end = hs[i+1][0]
		}
		return start, end
	}
	return -1, -1
}

// codexConfig adds the MCP server and turns Codex's hooks on in a
// config.toml, keeping the rest of the file as it is. A user's own
// [mcp_servers.git-synaptic] is left alone; a codex_hooks = false the user
// set is left too, and reported.
func codexConfig(text string) (string, string) {
	outside := stripBlock(text)
	var block []string
	if !tomlServerHeader().MatchString(outside) {
		block = append(block, "[mcp_servers.git-synaptic]", `command = "git-synaptic"`, `args = ["mcp"]`)
	}
	var set string // the value the user gave codex_hooks, if any
	if m := tomlDottedFeat().FindStringSubmatch(outside); m != nil {
		set = m[1]
	} else if s, e := tomlTable(outside, "features"); s >= 0 {
		if m := tomlCodexHooks().FindStringSubmatch(outside[s:e]); m != nil {
			set = m[1]
		} else {
			// the user's [features]: one marked line at its top
			ts, _ := tomlTable(text, "features")
			text = text[:ts] + "codex_hooks = true " + tomlMark + "\n" + text[ts:]
		}
	} else {
		if len(block) > 0 {
			block = append(block, "")
		}
		block = append(block, "[features]", "codex_hooks = true")
	}
	var note string
	if set != "" && set != "true" {
		note = "Codex hooks are off (features.codex_hooks = " + set + " in .codex/config.toml): git-synaptic's hooks run once it is true"
	}
	if len(block) == 0 {
		text, _ = dropBlock(text, tomlBegin, tomlEnd)
		return text, note
	}
	return putBlock(text, tomlBegin, tomlEnd, tomlBegin+"\n"+strings.Join(block, "\n")+"\n"+tomlEnd+"\n"), note
}

// stripBlock is text without init's marked block.
func stripBlock(text string) string {
	t, _ := dropBlock(text, tomlBegin, tomlEnd)
	return t
}

// uncodexConfig takes out what codexConfig added.
func uncodexConfig(text string) string {
	text, _ = dropBlock(text, tomlBegin, tomlEnd)
	var out []string
	for _, line := range strings.SplitAfter(text, "\n") {
		if strings.HasSuffix(strings.TrimRight(line, "\r\n"), " "+tomlMark) {
			continue
		}
		out = append(out, line)
	}
	return strings.Join(out, "")
}
