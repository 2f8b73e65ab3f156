package agents

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// userFiles are settings files a user already has, one per agent: hooks,
// permissions and keys of their own, laid out as they like.
var userFiles = map[string]map[string]string{
	"claude": {
		".claude/settings.json": `{
    "permissions": {
        "allow": ["Bash(npm test)"],
        "deny": ["Read(./.env)"]
    },
    "hooks": {
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "./lint.sh"}]}
        ],
        "Stop": []
    },
    "model": "opus"
}
`,
		".mcp.json": `{"mcpServers": {"db": {"command": "db-mcp", "args": []}}}`,
	},
	"codex": {
		".codex/hooks.json":  "{\n\t\"hooks\": {\n\t\t\"SessionStart\": [{\"hooks\": [{\"type\": \"command\", \"command\": \"echo hi\"}]}]\n\t}\n}\n",
		".codex/config.toml": "model = \"gpt-5\"\n\n[mcp_servers.docs]\ncommand = \"docs-mcp\"\n",
	},
	"gemini": {
		".gemini/settings.json": `{
  "theme": "GitHub",
  "mcpServers": {},
  "hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "./audit.sh", "timeout": 5000}]}]}
}`,
	},
	"cursor": {
		".cursor/hooks.json": `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [{ "command": "./format.sh" }],
    "stop": [{ "command": "./notify.sh" }]
  }
}
`,
		".cursor/mcp.json": "{\n  \"mcpServers\": {\n    \"web\": {\"url\": \"http://localhost:3000/mcp\"}\n  }\n}\n",
	},
}

func writeAll(t *testing.T, top string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		path := filepath.Join(top, rel)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tree is every file under top with its content.
func tree(t *testing.T, top string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(top, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(top, path)
		if d.IsDir() {
			if rel != "." {
				out[rel+"/"] = ""
			}
			return nil
		}
		data, err := os.ReadFile(path)
		out[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok {
			t.Errorf("%s: %s is gone", what, k)
		} else if g != v {
			t.Errorf("%s: %s is\n%s\nwant\n%s", what, k, g, v)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: %s is left", what, k)
		}
	}
}

// Install keeps every byte of the user's files around what it adds,
// running it again changes nothing, and Remove gives the files back as
// they were, byte for byte.
func TestInstallRemoveKeepUserFiles(t *testing.T) {
	skill := Skill("v1.2.3")
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			a, _ := Lookup(name)
			top := t.TempDir()
			writeAll(t, top, userFiles[name])
			before := tree(t, top)
			rec := &Record{}
			changes, err := Install(top, a, skill, rec)
			if err != nil {
				t.Fatal(err)
			}
			if len(changes) == 0 {
				t.Fatal("install changed nothing")
			}
			installed := tree(t, top)
			for rel, content := range installed {
				if strings.HasSuffix(rel, ".json") && !json.Valid([]byte(content)) {
					t.Errorf("%s is not JSON after install:\n%s", rel, content)
				}
			}
			if got := installed[filepath.FromSlash(a.SkillPath())]; got != string(skill) {
				t.Errorf("the skill is %q", got)
			}
			settings := installed[filepath.FromSlash(a.HooksFile)]
			for _, ev := range Events {
				if !strings.Contains(settings, `"`+a.HookCommand(ev)+`"`) {
					t.Errorf("%s lacks %s:\n%s", a.HooksFile, a.HookCommand(ev), settings)
				}
			}
			if !strings.Contains(installed[filepath.FromSlash(a.MCPFile)], "mcp") {
				t.Errorf("%s lacks the MCP server", a.MCPFile)
			}
			again, err := Install(top, a, skill, rec)
			if err != nil || len(again) != 0 {
				t.Errorf("a second install: %v, %v", again, err)
			}
			sameTree(t, "after a second install", tree(t, top), installed)
			removed, err := Remove(top, a, skill, rec)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range removed {
				if c.Hint {
					t.Errorf("hint: %s", c.Message)
				}
			}
			sameTree(t, "after remove", tree(t, top), before)
			if again, err := Remove(top, a, skill, rec); err != nil || len(again) != 0 {
				t.Errorf("a second remove: %v, %v", again, err)
			}
		})
	}
}

// In a tree without the agent's files, Remove leaves nothing behind of
// what Install wrote: no file, no folder; without Install's record too
// (a clone of a repository whose agent files were committed).
func TestRemoveLeavesNoTrace(t *testing.T) {
	for _, name := range Names() {
		for _, rec := range []*Record{{}, nil} {
			a, _ := Lookup(name)
			top := t.TempDir()
			if _, err := Install(top, a, Skill("v1"), rec); err != nil {
				t.Fatal(err)
			}
			if _, err := Remove(top, a, Skill("v1"), rec); err != nil {
				t.Fatal(err)
			}
			sameTree(t, name, tree(t, top), map[string]string{})
		}
	}
}

// With Install's record, what the user had before stays, even where
// Remove empties it: an empty list of theirs, an empty folder.
func TestRecordKeepsWhatWasThere(t *testing.T) {
	a, _ := Lookup("claude")
	top := t.TempDir()
	writeAll(t, top, map[string]string{".claude/settings.json": `{"hooks": {"Stop": []}, "permissions": {"deny": []}}`})
	if err := os.MkdirAll(filepath.Join(top, ".claude/skills"), 0o755); err != nil {
		t.Fatal(err)
	}
	before := tree(t, top)
	rec := &Record{}
	if _, err := Install(top, a, Skill("v1"), rec); err != nil {
		t.Fatal(err)
	}
	if _, err := Remove(top, a, Skill("v1"), rec); err != nil {
		t.Fatal(err)
	}
	sameTree(t, "with a record", tree(t, top), before)
}

// What the user changed in git-evolve's entries, or put in their place,
// is theirs: kept, and said.
func TestUserChangesKept(t *testing.T) {
	a, _ := Lookup("claude")
	top := t.TempDir()
	writeAll(t, top, map[string]string{
		".claude/skills/git-evolve/SKILL.md": "---\nname: git-evolve\ndescription: mine\n---\n",
		".mcp.json":                          `{"mcpServers": {"git-evolve": {"command": "/opt/git-evolve", "args": ["mcp"]}}}`,
	})
	changes, err := Install(top, a, Skill("v1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hinted(changes, "not git-evolve's") {
		t.Errorf("no hint for the user's skill: %v", changes)
	}
	if got, _ := os.ReadFile(filepath.Join(top, ".mcp.json")); !bytes.Contains(got, []byte("/opt/git-evolve")) {
		t.Errorf("the user's MCP entry was replaced: %s", got)
	}
	changes, err = Remove(top, a, Skill("v1"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !hinted(changes, "not as git-evolve wrote it") {
		t.Errorf("no hint for the user's MCP entry: %v", changes)
	}
	if _, err := os.Stat(filepath.Join(top, ".claude/skills/git-evolve/SKILL.md")); err != nil {
		t.Errorf("the user's skill was removed: %v", err)
	}
	// git-evolve's own skill, edited since: left too.
	top = t.TempDir()
	if _, err := Install(top, a, Skill("v1"), nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(top, a.SkillPath())
	if err := os.WriteFile(path, append(Skill("v1"), "my notes\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	changes, _ = Remove(top, a, Skill("v1"), nil)
	if !hinted(changes, "changed since") {
		t.Errorf("no hint for the edited skill: %v", changes)
	}
	// An older version's skill is updated by install.
	changes, _ = Install(top, a, Skill("v2"), nil)
	if len(changes) == 0 || !strings.Contains(changes[0].Message, "updated") {
		t.Errorf("install over an older skill: %v", changes)
	}
}

func hinted(cs []Change, s string) bool {
	for _, c := range cs {
		if c.Hint && strings.Contains(c.Message, s) {
			return true
		}
	}
	return false
}

// A settings file that is not JSON is left alone, and said.
func TestBrokenSettingsLeftAlone(t *testing.T) {
	a, _ := Lookup("claude")
	top := t.TempDir()
	writeAll(t, top, map[string]string{".claude/settings.json": `{"hooks": {`, ".mcp.json": `{"mcpServers": []}`})
	before := tree(t, top)
	if _, err := Install(top, a, Skill("v1"), nil); err == nil || !strings.Contains(err.Error(), "mcpServers is not an object") {
		t.Errorf("install over a list of servers: %v", err)
	}
	writeAll(t, top, map[string]string{".mcp.json": `{}`})
	_, err := Install(top, a, Skill("v1"), nil)
	if err == nil || !strings.Contains(err.Error(), ".claude/settings.json") {
		t.Errorf("install over broken settings: %v", err)
	}
	got := tree(t, top)
	if got[".claude/settings.json"] != before[".claude/settings.json"] {
		t.Errorf("broken settings changed: %q", got[".claude/settings.json"])
	}
}

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		agent string
		ev    Event
		ans   Answer
		want  string
	}{
		{"claude", SessionStart, Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c"}}`},
		{"claude", Stop, Answer{Continue: "next"}, `{"decision":"block","reason":"next"}`},
		{"claude", Stop, Answer{}, `{}`},
		{"claude", Stop, Answer{Message: "halted"}, `{"systemMessage":"halted"}`},
		{"claude", PreTool, Answer{Deny: "no"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"codex", Stop, Answer{Continue: "next"}, `{"decision":"block","reason":"next"}`},
		{"codex", PreTool, Answer{Deny: "no"}, `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no"}}`},
		{"gemini", SessionStart, Answer{Context: "c"}, `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"c"}}`},
		{"gemini", Stop, Answer{Continue: "next"}, `{"decision":"deny","reason":"next"}`},
		{"gemini", PreTool, Answer{Deny: "no"}, `{"decision":"deny","reason":"no"}`},
		{"cursor", SessionStart, Answer{Context: "c"}, `{"additional_context":"c"}`},
		{"cursor", Stop, Answer{Continue: "next", Message: "m"}, `{"followup_message":"next"}`},
		{"cursor", PreTool, Answer{Deny: "no"}, `{"permission":"deny","user_message":"no","agent_message":"no"}`},
	} {
		a, _ := Lookup(tc.agent)
		if got := strings.TrimSpace(string(a.Encode(tc.ev, tc.ans))); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.agent, tc.ev, got, tc.want)
		}
	}
}

func TestParsePayload(t *testing.T) {
	for _, tc := range []struct {
		in      string
		paths   []string
		command string
	}{
		{`{"hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/r/GOALS.yaml","old_string":"a","new_string":"b"}}`, []string{"/r/GOALS.yaml"}, ""},
		{`{"tool_name":"MultiEdit","tool_input":{"file_path":"/r/a.go","edits":[{"old_string":"x","new_string":"y"}]}}`, []string{"/r/a.go"}, ""},
		{`{"tool_name":"NotebookEdit","tool_input":{"notebook_path":"/r/n.ipynb"}}`, []string{"/r/n.ipynb"}, ""},
		{`{"tool_name":"Bash","tool_input":{"command":"rm -rf .git/evolve"}}`, nil, "rm -rf .git/evolve"},
		{`{"tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: GOALS.yaml\n@@\n-a\n+b\n*** Add File: new.go\n*** End Patch\n"}}`, []string{"GOALS.yaml", "new.go"}, ""},
		{`{"hook_event_name":"beforeShellExecution","command":"git evolve stop","cwd":"/r"}`, nil, "git evolve stop"},
		{`{"hook_event_name":"preToolUse","tool_name":"Write","tool_input":"{\"file_path\":\"/r/x\"}"}`, []string{"/r/x"}, ""},
		{``, nil, ""},
	} {
		p, err := ParsePayload([]byte(tc.in))
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if strings.Join(p.Paths, ",") != strings.Join(tc.paths, ",") {
			t.Errorf("%s: paths %q, want %q", tc.in, p.Paths, tc.paths)
		}
		if tc.command != "" && p.Command != tc.command {
			t.Errorf("%s: command %q", tc.in, p.Command)
		}
	}
	for _, bad := range []string{`[]`, `{`, `"x"`, strings.Repeat(" ", MaxPayload+1)} {
		if _, err := ParsePayload([]byte(bad)); err == nil {
			t.Errorf("%.20q: no error", bad)
		}
	}
}

// FuzzParsePayload: any input is read or refused, never more than the
// bounded paths.
func FuzzParsePayload(f *testing.F) {
	f.Add([]byte(`{"hook_event_name":"Stop","stop_hook_active":true}`))
	f.Add([]byte(`{"tool_name":"apply_patch","tool_input":{"command":"*** Update File: a\n*** Move to: b\n"}}`))
	f.Add([]byte(`{"tool_input":"{\"edits\":[{\"file_path\":\"x\"}]}"}`))
	f.Add([]byte(`{"tool_input":{"command":["bash","-lc","ls"]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePayload(data)
		if err != nil {
			return
		}
		if len(p.Paths) > maxPaths || len(p.Event) > 64 || len(p.Tool) > 128 {
			t.Fatalf("unbounded: %d paths", len(p.Paths))
		}
	})
}

// FuzzSettingsRoundTrip: on any settings file that is a JSON object, an
// install gives valid JSON, and a remove after it gives the file back
// byte for byte.
func FuzzSettingsRoundTrip(f *testing.F) {
	for _, files := range userFiles {
		for rel, content := range files {
			if strings.HasSuffix(rel, ".json") {
				f.Add(content)
			}
		}
	}
	f.Add(`{}`)
	f.Add(`{"hooks":{"Stop":[{"hooks":[]}]},"permissions":{"deny":[]}}`)
	f.Add("{\r\n\t\"a\" : [ 1 , 2 ] ,\"hooks\":{ } }")
	f.Fuzz(func(t *testing.T, doc string) {
		var v map[string]any
		if json.Unmarshal([]byte(doc), &v) != nil || strings.Contains(doc, "git evolve") || strings.Contains(doc, "git-evolve") ||
			strings.Contains(doc, "/.git/") || strings.Contains(doc, `\`) {
			return
		}
		for _, name := range Names() {
			a, _ := Lookup(name)
			top := t.TempDir()
			writeAll(t, top, map[string]string{a.HooksFile: doc})
			rec := &Record{}
			if _, err := Install(top, a, Skill("v1"), rec); err != nil {
				continue // a file whose hooks are not an object, say
			}
			got, _ := os.ReadFile(filepath.Join(top, a.HooksFile))
			if !json.Valid(got) {
				t.Fatalf("%s: invalid after install:\n%s", name, got)
			}
			if _, err := Remove(top, a, Skill("v1"), rec); err != nil {
				t.Fatalf("%s: remove: %v", name, err)
			}
			back, err := os.ReadFile(filepath.Join(top, a.HooksFile))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if string(back) != doc {
				t.Fatalf("%s: not given back:\n%q\nwant\n%q", name, back, doc)
			}
		}
	})
}

// The skill's frontmatter is what the Agent Skills format asks: a name of
// lowercase letters and hyphens (at most 64) that is its folder's, and a
// description of at most 1024 characters, as YAML.
func TestSkillFrontmatter(t *testing.T) {
	text := string(Skill("v1.2.3"))
	front, body, ok := strings.Cut(strings.TrimPrefix(text, "---\n"), "\n---\n")
	if !strings.HasPrefix(text, "---\n") || !ok {
		t.Fatalf("no frontmatter:\n%s", text)
	}
	var meta struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description"`
	}
	if err := yaml.Unmarshal([]byte(front), &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Name != SkillName || !regexp.MustCompile(`^[a-z0-9-]{1,64}$`).MatchString(meta.Name) {
		t.Errorf("name %q", meta.Name)
	}
	if meta.Description == "" || len(meta.Description) > 1024 {
		t.Errorf("description of %d characters", len(meta.Description))
	}
	if !strings.Contains(body, skillMarker) || !strings.Contains(body, "git-evolve v1.2.3") {
		t.Errorf("the body does not say who wrote it, and which version")
	}
}
