// Package agents is git-evolve's integration with the coding agents that
// run the loop inside their own interactive sessions: Claude Code, Codex
// CLI, Gemini CLI and Cursor. For each it knows where its skills, its MCP
// servers and its hooks are configured, installs git-evolve's entries there
// without touching what the user has (settings files are edited in place:
// the user's bytes around an entry stay as they were), takes out exactly
// those entries again, reads the payload each agent gives a hook on its
// standard input (bounded, parsed defensively) and writes the answer in that
// agent's own format. It knows nothing of git or of the loop: the face
// decides what a hook answers.
package agents

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Event is a moment of an agent's session that git-evolve hooks.
type Event string

const (
	// SessionStart: the session begins (or resumes): the agent is told
	// where the loop stands and, in a cycle, its brief.
	SessionStart Event = "session-start"
	// Stop: the agent ends its turn: the open cycle is finished through
	// the judge and, when the loop goes on, the agent is told to continue
	// with the next brief.
	Stop Event = "stop"
	// PreTool: the agent is about to run a tool: an edit of the held ruler
	// or of the git directory is denied during a cycle.
	PreTool Event = "pre-tool"
)

// Events are the events in the order they are installed.
var Events = []Event{SessionStart, Stop, PreTool}

// hookSpec is how one agent configures one event's hook.
type hookSpec struct {
	name    string // the agent's name of the event
	matcher string // the tools it applies to ("" for none)
	timeout int    // in the agent's unit (0: the agent's default)
	extra   []field
}

// Agent is one agent's integration.
type Agent struct {
	// Name is what --agent takes; Title the agent's own name.
	Name, Title string
	// Skills is the folder of the agent's project skills.
	Skills string
	// MCPFile is where the agent reads its project MCP servers; MCPTOML
	// says it is TOML (Codex's config.toml), not JSON with mcpServers.
	MCPFile string
	MCPTOML bool
	// HooksFile is the settings file that holds the hooks; Flat says its
	// events list hooks themselves (Cursor), not groups of them with a
	// matcher; Skeleton is what a new file holds besides them.
	HooksFile string
	Flat      bool
	Skeleton  []field
	hooks     map[Event]hookSpec
	// Deny are permission rules that keep the agent out of the driver's
	// state (Claude Code's permissions.deny).
	Deny []string
	// Docs names the documentation each payload and answer follows.
	Docs string
}

// mcpFinish matches the MCP tools of git-evolve's server that finish or
// abort a cycle, as Claude Code and Gemini CLI name an MCP server's tools
// (mcp__<server>__<tool>): the Stop hook finishes a session's cycles.
const mcpFinish = "mcp__" + MCPName + "__cycle_(finish|abort)"

// IsFinishTool reports whether a tool is git-evolve's MCP tool that
// finishes or aborts a cycle.
func IsFinishTool(tool string) bool {
	return tool == "mcp__"+MCPName+"__cycle_finish" || tool == "mcp__"+MCPName+"__cycle_abort"
}

// SkillName is the name of git-evolve's skill in every agent.
const SkillName = "git-evolve"

// MCPName is the name of git-evolve's MCP server entry.
const MCPName = "git-evolve"

var all = map[string]*Agent{
	"claude": {
		Name: "claude", Title: "Claude Code",
		Skills:  ".claude/skills",
		MCPFile: ".mcp.json", HooksFile: ".claude/settings.json",
		hooks: map[Event]hookSpec{
			SessionStart: {name: "SessionStart", timeout: 120},
			Stop:         {name: "Stop", timeout: 3600},
			PreTool:      {name: "PreToolUse", matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash|" + mcpFinish, timeout: 30},
		},
		// The driver's state and the git directory: the agent reads the
		// brief from the hooks, never from there.
		Deny: []string{"Read(/.git/evolve/**)", "Edit(/.git/**)"},
		Docs: "Claude Code hooks reference (code.claude.com/docs/en/hooks)",
	},
	"codex": {
		Name: "codex", Title: "Codex CLI",
		Skills:  ".agents/skills",
		MCPFile: ".codex/config.toml", MCPTOML: true, HooksFile: ".codex/hooks.json",
		hooks: map[Event]hookSpec{
			SessionStart: {name: "SessionStart", timeout: 120},
			Stop:         {name: "Stop", timeout: 3600},
			PreTool:      {name: "PreToolUse", matcher: "Bash|apply_patch", timeout: 30},
		},
		Docs: "Codex hooks (developers.openai.com/codex/hooks) and the schemas in codex-rs/hooks/schema",
	},
	"gemini": {
		Name: "gemini", Title: "Gemini CLI",
		Skills:  ".gemini/skills",
		MCPFile: ".gemini/settings.json", HooksFile: ".gemini/settings.json",
		hooks: map[Event]hookSpec{
			SessionStart: {name: "SessionStart", timeout: 120000},
			Stop:         {name: "AfterAgent", timeout: 3600000},
			PreTool:      {name: "BeforeTool", matcher: "write_file|replace|run_shell_command|" + mcpFinish, timeout: 30000},
		},
		Docs: "Gemini CLI hooks reference (geminicli.com/docs/hooks/reference)",
	},
	"cursor": {
		Name: "cursor", Title: "Cursor",
		Skills:  ".cursor/skills",
		MCPFile: ".cursor/mcp.json", HooksFile: ".cursor/hooks.json", Flat: true,
		Skeleton: []field{{"version", 1}},
		hooks: map[Event]hookSpec{
			SessionStart: {name: "sessionStart", timeout: 120},
			// Cursor caps the follow-ups a stop hook may send; the loop's
			// own halt-check is the ruler, so the cap is set high.
			Stop:    {name: "stop", timeout: 3600, extra: []field{{"loop_limit", 100}}},
			PreTool: {name: "preToolUse", matcher: "Write|Edit|Delete|Shell", timeout: 30},
		},
		Docs: "Cursor hooks (cursor.com/docs/agent/hooks)",
	},
}

// Names are the agents' names, sorted.
func Names() []string {
	var out []string
	for n := range all {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Lookup returns the agent of that name.
func Lookup(name string) (*Agent, error) {
	a, ok := all[name]
	if !ok {
		return nil, fmt.Errorf("no agent %q: one of %v", name, Names())
	}
	return a, nil
}

// HookCommand is the command an installed hook runs for an event.
func (a *Agent) HookCommand(ev Event) string {
	return "git evolve hook agent " + a.Name + " " + string(ev)
}

// HookEvent is the agent's own name of an event.
func (a *Agent) HookEvent(ev Event) string { return a.hooks[ev].name }

// hookEntry is the hook git-evolve installs for an event: a group with its
// matcher (or, in a flat file, the hook itself).
func (a *Agent) hookEntry(ev Event) ordered {
	spec := a.hooks[ev]
	hook := ordered{}
	if !a.Flat {
		hook = append(hook, field{"type", "command"})
	}
	if a.Name == "gemini" {
		hook = append(hook, field{"name", "git-evolve-" + string(ev)})
	}
	hook = append(hook, field{"command", a.HookCommand(ev)})
	if spec.timeout > 0 {
		hook = append(hook, field{"timeout", spec.timeout})
	}
	if a.Flat {
		if spec.matcher != "" {
			hook = append(hook, field{"matcher", spec.matcher})
		}
		return append(hook, spec.extra...)
	}
	group := ordered{}
	if spec.matcher != "" {
		group = append(group, field{"matcher", spec.matcher})
	}
	return append(group, field{"hooks", []any{hook}})
}

// isOurs reports whether a hook's command is one git-evolve installed.
func (a *Agent) isOurs(command string) bool {
	return slices.ContainsFunc(Events, func(ev Event) bool { return command == a.HookCommand(ev) })
}

// field and ordered are a JSON object whose keys keep their order.
type field struct {
	k string
	v any
}

type ordered []field

// MarshalJSON writes the object with its keys in order.
func (o ordered) MarshalJSON() ([]byte, error) {
	var b []byte
	b = append(b, '{')
	for i, f := range o {
		if i > 0 {
			b = append(b, ',')
		}
		k, err := json.Marshal(f.k)
		if err != nil {
			return nil, err
		}
		v, err := json.Marshal(f.v)
		if err != nil {
			return nil, err
		}
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}'), nil
}

//go:embed skill.md
var skillText string

// Skill is git-evolve's skill file (SKILL.md), as version writes it.
func Skill(version string) []byte {
	return []byte(strings.ReplaceAll(skillText, "{{VERSION}}", version))
}
