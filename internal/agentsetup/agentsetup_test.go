package agentsetup

import (
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/git-synaptic/git-synaptic/internal/agents"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const testRule = "Save to project memory as you work."

// tree reads every file under dir (relative slash paths to contents).
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func dirs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return err
	})
	return out
}

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func options(t *testing.T) Options {
	root := t.TempDir()
	return Options{Root: root, StateDir: filepath.Join(t.TempDir(), "agents"), Rule: testRule}
}

// For each agent, init writes what the golden files hold, into an empty
// working tree and into one with the user's own configuration (whose
// servers, hooks, settings and comments stay); what it writes has the
// fields the agent's documentation lists; a second run changes nothing;
// --remove puts every file back byte for byte and leaves no folder behind.
func TestSetupGoldenAndRemove(t *testing.T) {
	for _, a := range agents.All {
		for _, c := range []string{"empty", "existing"} {
			t.Run(a.Name+"/"+c, func(t *testing.T) {
				o := options(t)
				before := map[string]string{}
				if c == "existing" {
					before = tree(t, filepath.Join("testdata", "existing", a.Name))
					writeTree(t, o.Root, before)
				}
				beforeDirs := dirs(t, o.Root)
				changes, err := Setup(o, a)
				if err != nil {
					t.Fatal(err)
				}
				if len(changes) == 0 {
					t.Fatal("no changes")
				}
				got := tree(t, o.Root)
				golden := filepath.Join("testdata", "golden", a.Name, c)
				if *update {
					_ = os.RemoveAll(golden)
					writeTree(t, golden, got)
				}
				want := tree(t, golden)
				if len(got) != len(want) {
					t.Errorf("files %v, want %v", keys(got), keys(want))
				}
				for rel, w := range want {
					if got[rel] != w {
						t.Errorf("%s:\n%s\nwant:\n%s", rel, got[rel], w)
					}
				}
				for rel, text := range got {
					if err := validate(a, rel, text); err != nil {
						t.Errorf("%s: %v\n%s", rel, err, text)
					}
					if old, ok := before[rel]; ok {
						keptEveryLine(t, rel, old, text)
					}
				}
				for _, ch := range changes {
					if ch.Action == "updated" && ch.Backup == "" {
						t.Errorf("%s changed without a backup", ch.Path)
					}
				}
				if again, err := Setup(o, a); err != nil || len(again) != 0 {
					t.Fatalf("second run: %v %+v", err, again)
				}
				if _, err := Remove(o, a); err != nil {
					t.Fatal(err)
				}
				after := tree(t, o.Root)
				if len(after) != len(before) {
					t.Errorf("after --remove: files %v, want %v", keys(after), keys(before))
				}
				for rel, b := range before {
					if after[rel] != b {
						t.Errorf("after --remove %s:\n%q\nwant:\n%q", rel, after[rel], b)
					}
				}
				if d := dirs(t, o.Root); !slices.Equal(d, beforeDirs) {
					t.Errorf("folders after --remove %v, want %v", d, beforeDirs)
				}
				if again, err := Remove(o, a); err != nil || len(again) != 0 {
					t.Fatalf("second remove: %v %+v", err, again)
				}
			})
		}
	}
}

// keptEveryLine checks that nothing of the user's file is gone: its
// characters (comments included, whitespace aside) are all still there,
// in order.
func keptEveryLine(t *testing.T, rel, old, now string) {
	t.Helper()
	rest := now
	for _, r := range old {
		if r == ' ' || r == '\t' || r == '\n' || r == '\r' {
			continue
		}
		i := strings.IndexRune(rest, r)
		if i < 0 {
			t.Errorf("%s lost some of the user's text:\n%s\nwas:\n%s", rel, now, old)
			return
		}
		rest = rest[i+1:]
	}
}

func keys(m map[string]string) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

// When the user changed a file after init, --remove takes out exactly
// git-synaptic's entries and keeps the user's change.
func TestRemoveAfterTheUserEdited(t *testing.T) {
	for _, a := range agents.All {
		t.Run(a.Name, func(t *testing.T) {
			o := options(t)
			before := tree(t, filepath.Join("testdata", "existing", a.Name))
			writeTree(t, o.Root, before)
			if _, err := Setup(o, a); err != nil {
				t.Fatal(err)
			}
			edited := map[string]string{}
			for rel, text := range tree(t, o.Root) {
				if strings.HasSuffix(rel, ".json") || strings.HasSuffix(rel, ".jsonc") {
					d := &jsonDoc{text: []byte(text), name: rel}
					if _, err := d.set(nil, "userAddedLater", true); err != nil {
						t.Fatal(err)
					}
					text = string(d.text)
				} else {
					text += "\n# the user added this later\n"
				}
				edited[rel] = text
			}
			writeTree(t, o.Root, edited)
			if _, err := Remove(o, a); err != nil {
				t.Fatal(err)
			}
			for rel, text := range tree(t, o.Root) {
				if strings.Contains(text, "git-synaptic") {
					t.Errorf("%s still names git-synaptic:\n%s", rel, text)
				}
				if !strings.Contains(text, "userAddedLater") && !strings.Contains(text, "the user added this later") {
					t.Errorf("%s lost the user's change:\n%s", rel, text)
				}
				if b, ok := before[rel]; ok {
					keptEveryLine(t, rel, b, text)
				}
			}
		})
	}
}

// A setup killed after it recorded a file but before it wrote it leaves
// the file as it was; run again and removed, it comes back byte for byte.
func TestKilledBeforeTheWrite(t *testing.T) {
	claude, _ := agents.Lookup("claude")
	o := options(t)
	before := tree(t, filepath.Join("testdata", "existing", "claude"))
	writeTree(t, o.Root, before)
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	writeTree(t, o.Root, before) // as if the writes never happened
	if _, err := Remove(o, claude); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, o.Root); got[".mcp.json"] != before[".mcp.json"] || got[".claude/settings.json"] != before[".claude/settings.json"] {
		t.Fatalf("after a remove of nothing: %v", got)
	}
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	writeTree(t, o.Root, map[string]string{".mcp.json": before[".mcp.json"]})
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(o, claude); err != nil {
		t.Fatal(err)
	}
	for rel, b := range before {
		if got := tree(t, o.Root)[rel]; got != b {
			t.Errorf("%s after setup, kill, setup, remove:\n%s\nwant:\n%s", rel, got, b)
		}
	}
}

// A file that is not JSON, or whose hooks are not the documented shape,
// is refused and left untouched; a path that leads out of the
// repository through a symlink is never written.
func TestRefusals(t *testing.T) {
	claude, _ := agents.Lookup("claude")
	o := options(t)
	writeTree(t, o.Root, map[string]string{".mcp.json": "{broken", ".claude/settings.json": `{"hooks": []}`})
	if _, err := Setup(o, claude); err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("broken .mcp.json: %v", err)
	}
	writeTree(t, o.Root, map[string]string{".mcp.json": "{}"})
	if _, err := Setup(o, claude); err == nil || !strings.Contains(err.Error(), "hooks is not an object") {
		t.Fatalf("hooks as a list: %v", err)
	}
	if got := tree(t, o.Root)[".claude/settings.json"]; got != `{"hooks": []}` {
		t.Fatalf("a refused file was changed: %s", got)
	}

	outside := t.TempDir()
	o = options(t)
	if err := os.Symlink(outside, filepath.Join(o.Root, ".claude")); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(o, claude); err == nil || !strings.Contains(err.Error(), "outside the repository") {
		t.Fatalf("symlink out: %v", err)
	}
	if len(tree(t, outside)) != 0 {
		t.Fatal("wrote through a symlink out of the repository")
	}
	// a link that stays inside is followed
	o = options(t)
	writeTree(t, o.Root, map[string]string{"shared/settings.json": "{}\n"})
	if err := os.MkdirAll(filepath.Join(o.Root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../shared/settings.json", filepath.Join(o.Root, ".claude", "settings.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(o.Root, ".claude", "settings.json")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatal("the link was replaced")
	}
	if !strings.Contains(tree(t, o.Root)["shared/settings.json"], "git-synaptic hook stop") {
		t.Fatal("the link's target was not written")
	}
}

// Codex's hooks stay off when the user turned them off: init says so
// and leaves the setting.
func TestCodexHooksTurnedOff(t *testing.T) {
	codex, _ := agents.Lookup("codex")
	o := options(t)
	writeTree(t, o.Root, map[string]string{".codex/config.toml": "[features]\ncodex_hooks = false\n"})
	changes, err := Setup(o, codex)
	if err != nil {
		t.Fatal(err)
	}
	var note string
	for _, c := range changes {
		note += c.Note
	}
	text := tree(t, o.Root)[".codex/config.toml"]
	if !strings.Contains(note, "Codex hooks are off") || !strings.Contains(text, "codex_hooks = false") || strings.Count(text, "codex_hooks") != 1 {
		t.Fatalf("note %q, config:\n%s", note, text)
	}
}

// Detect finds agents by their folders and files, in the project or in
// the home folder.
func TestDetect(t *testing.T) {
	o := options(t)
	o.Home = t.TempDir()
	if got := Detect(o); len(got) != 0 {
		t.Fatalf("nothing there: %v", got)
	}
	writeTree(t, o.Root, map[string]string{".cursor/rules/x.mdc": "x", "opencode.json": "{}"})
	writeTree(t, o.Home, map[string]string{".codex/config.toml": ""})
	var names []string
	for _, a := range Detect(o) {
		names = append(names, a.Name)
	}
	if strings.Join(names, ",") != "codex,cursor,opencode" {
		t.Fatalf("detected %v", names)
	}
}

// The fields each agent's documentation lists (see the pages cited in
// plan): events it knows, hook entries with the fields it reads.
var documented = map[string]struct {
	events    []string
	grouped   bool // event -> [{matcher, hooks: [hook]}]
	hookKeys  []string
	topKeys   []string // besides "hooks"
	serverKey string
}{
	"claude": {[]string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "SubagentStop", "PreCompact", "Notification", "SessionEnd"}, true, []string{"type", "command", "timeout"}, nil, "mcpServers"},
	"codex":  {[]string{"SessionStart", "PreToolUse", "PermissionRequest", "PostToolUse", "UserPromptSubmit", "Stop", "PreCompact", "PostCompact"}, true, []string{"type", "command", "timeout", "statusMessage"}, nil, ""},
	"gemini": {[]string{"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "SessionStart", "SessionEnd", "Notification", "PreCompress"}, true, []string{"type", "command", "name", "timeout", "description"}, nil, "mcpServers"},
	"cursor": {[]string{"sessionStart", "sessionEnd", "preToolUse", "postToolUse", "beforeShellExecution", "afterShellExecution", "beforeMCPExecution", "afterMCPExecution", "beforeReadFile", "afterFileEdit", "beforeSubmitPrompt", "preCompact", "stop", "afterAgentResponse"}, false, []string{"command", "type", "matcher", "timeout"}, []string{"version"}, "mcpServers"},
	"vscode": {[]string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "SubagentStart", "SubagentStop", "Stop"}, false, []string{"type", "command", "windows", "linux", "osx", "cwd", "env", "timeout"}, nil, "servers"},
}

// validate checks one written file against its agent's documented shape.
func validate(a agents.Agent, rel, text string) error {
	switch {
	case strings.HasSuffix(rel, ".toml"):
		return validateCodexTOML(text)
	case strings.HasSuffix(rel, ".md") || strings.HasSuffix(rel, ".mdc"):
		if !strings.Contains(text, testRule) || !strings.Contains(text, "context_search") {
			return errString("the instructions lack the rule or the search")
		}
		if strings.HasSuffix(rel, ".mdc") && !strings.HasPrefix(text, "---\ndescription: ") {
			return errString("a Cursor rule starts with its front matter")
		}
		return nil
	}
	root, err := parseJSONC([]byte(text))
	if err != nil {
		return err
	}
	doc, _ := decode([]byte(text), root).(map[string]any)
	if a.Name == "opencode" {
		srv, _ := doc["mcp"].(map[string]any)["git-synaptic"].(map[string]any)
		if srv["type"] != "local" || srv["enabled"] != true || !slices.Equal(strs(srv["command"]), []string{"git-synaptic", "mcp"}) {
			return errString("opencode's mcp entry is {type: local, command: [git-synaptic, mcp], enabled: true}")
		}
		return nil
	}
	spec := documented[a.Name]
	if servers, ok := doc[spec.serverKey].(map[string]any); ok && spec.serverKey != "" {
		srv, _ := servers["git-synaptic"].(map[string]any)
		if srv["command"] != "git-synaptic" || !slices.Equal(strs(srv["args"]), []string{"mcp"}) || (a.Name == "vscode" && srv["type"] != "stdio") {
			return errString("the MCP server entry is not {command: git-synaptic, args: [mcp]}")
		}
	}
	hooks, ok := doc["hooks"]
	if !ok {
		return nil
	}
	if a.Name == "cursor" && doc["version"] != float64(1) {
		return errString("Cursor's hooks.json has version 1")
	}
	events, ok := hooks.(map[string]any)
	if !ok {
		return errString("hooks is not an object")
	}
	ourEvents := 0
	for ev, v := range events {
		if !slices.Contains(spec.events, ev) {
			return errString("unknown event " + ev)
		}
		list, ok := v.([]any)
		if !ok {
			return errString(ev + " is not a list")
		}
		for _, item := range list {
			entries := []any{item}
			if spec.grouped {
				g, _ := item.(map[string]any)
				for k := range g {
					if k != "matcher" && k != "hooks" && k != "sequential" {
						return errString("unknown group field " + k)
					}
				}
				entries, _ = g["hooks"].([]any)
				if len(entries) == 0 {
					return errString(ev + ": a group without hooks")
				}
			}
			for _, e := range entries {
				h, _ := e.(map[string]any)
				for k := range h {
					if !slices.Contains(spec.hookKeys, k) {
						return errString(ev + ": unknown hook field " + k)
					}
				}
				cmd, _ := h["command"].(string)
				if cmd == "" || (a.Name != "cursor" && h["type"] != "command") {
					return errString(ev + ": a hook needs type command and a command")
				}
				if strings.HasPrefix(cmd, hookPrefix) {
					ourEvents++
					want := command(a, agents.Event(strings.Fields(cmd)[2]))
					if cmd != want {
						return errString(ev + ": command " + cmd + ", want " + want)
					}
				}
			}
		}
	}
	if ourEvents != len(a.Hooks) {
		return errString("git-synaptic hooks " + string(rune('0'+ourEvents)))
	}
	return nil
}

var tomlLine = regexp.MustCompile(`^\s*(#.*|\[[A-Za-z0-9_.\-"]+\]\s*(#.*)?|[A-Za-z0-9_\-]+\s*=\s*("[^"]*"|true|false|\[[^\]]*\]|[0-9]+)\s*(#.*)?)?$`)

// validateCodexTOML checks the lines are TOML of the simple kind init
// writes and the user's fixture holds, with the server and the hooks flag.
func validateCodexTOML(text string) error {
	for _, line := range strings.Split(text, "\n") {
		if !tomlLine.MatchString(line) {
			return errString("not TOML: " + line)
		}
	}
	s, e := tomlTable(text, "mcp_servers.git-synaptic")
	if s < 0 || !strings.Contains(text[s:e], `command = "git-synaptic"`) || !strings.Contains(text[s:e], `args = ["mcp"]`) {
		return errString("no [mcp_servers.git-synaptic] with command and args")
	}
	if strings.Count(text, "[features]") != 1 {
		return errString("[features] must be defined once")
	}
	s, e = tomlTable(text, "features")
	if !regexp.MustCompile(`(?m)^codex_hooks = true`).MatchString(text[s:e]) {
		return errString("features.codex_hooks is not true")
	}
	return nil
}

func strs(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}

type errString string

func (e errString) Error() string { return string(e) }

// A hook group written in JSONC style (a trailing comma, a comment) is
// still recognised as git-synaptic's: a second init adds nothing.
func TestJSONCGroupsAreRecognised(t *testing.T) {
	claude, _ := agents.Lookup("claude")
	o := options(t)
	group := "{\"hooks\": [{\"type\": \"command\", \"command\": \"git-synaptic hook stop\"}, // ours\n]}"
	writeTree(t, o.Root, map[string]string{".claude/settings.json": "{\"hooks\": {\"Stop\": [" + group + "]}}\n"})
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	if got := tree(t, o.Root)[".claude/settings.json"]; strings.Count(got, "git-synaptic hook stop") != 1 {
		t.Fatalf("the stop hook twice:\n%s", got)
	}
}

// Settings an earlier version of init wrote (before backups) are taken
// out with the rest.
func TestRemoveWhatAnEarlierInitWrote(t *testing.T) {
	claude, _ := agents.Lookup("claude")
	o := options(t)
	old := "{\n  \"theme\": \"dark\",\n  \"hooks\": {\n    \"Stop\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"git-synaptic hook stop\"}]}]\n  }\n}\n"
	writeTree(t, o.Root, map[string]string{".claude/settings.json": old})
	if _, err := Setup(o, claude); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(o, claude); err != nil {
		t.Fatal(err)
	}
	got := tree(t, o.Root)[".claude/settings.json"]
	if strings.Contains(got, "git-synaptic") || !strings.Contains(got, `"theme": "dark"`) {
		t.Fatalf("after remove:\n%s", got)
	}
}
