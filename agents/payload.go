package agents

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

// MaxPayload is the largest hook payload read (1 MiB). An agent's payload
// holds a tool's input, which can be a whole file's content; past that
// size the hook answers nothing and the agent goes on.
const MaxPayload = 1 << 20

// maxPaths bounds the paths read from one tool input.
const maxPaths = 64

// Payload is what git-evolve reads of a hook's input: the fields of each
// agent's payload it uses, under one name.
type Payload struct {
	// Event is the agent's own name of the event (hook_event_name).
	Event string
	// StopHookActive: the agent continues already because a stop hook
	// said so (Claude Code, Codex, Gemini CLI); LoopCount: how many times
	// (Cursor).
	StopHookActive bool
	LoopCount      int
	// Tool is the tool about to run; Paths the files its input names
	// (file_path, path, notebook_path, and the files of a patch); Command
	// the shell command it runs.
	Tool    string
	Paths   []string
	Command string
}

// ErrPayload is returned for a payload that cannot be read.
var ErrPayload = errors.New("the hook's input is not a payload")

// rawPayload is the union of the fields the four agents send.
type rawPayload struct {
	HookEventName  string          `json:"hook_event_name"`
	StopHookActive bool            `json:"stop_hook_active"`
	LoopCount      int             `json:"loop_count"`
	ToolName       string          `json:"tool_name"`
	ToolInput      json.RawMessage `json:"tool_input"`
	Command        string          `json:"command"`   // Cursor's beforeShellExecution
	FilePath       string          `json:"file_path"` // Cursor's file events
}

// patchFile finds the files an apply_patch input names.
var patchFile = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?m)^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$`)
})

// ParsePayload reads a hook's input. An empty input is an empty payload
// (some agents send none for some events); anything else must be a JSON
// object of at most MaxPayload bytes.
func ParsePayload(data []byte) (*Payload, error) {
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPayload, MaxPayload)
	}
	if strings.TrimSpace(string(data)) == "" {
		return &Payload{}, nil
	}
	var raw rawPayload
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPayload, err)
	}
	p := &Payload{Event: clip(raw.HookEventName, 64), StopHookActive: raw.StopHookActive, LoopCount: raw.LoopCount,
		Tool: clip(raw.ToolName, 128), Command: raw.Command}
	if raw.FilePath != "" {
		p.Paths = append(p.Paths, raw.FilePath)
	}
	if len(raw.ToolInput) > 0 {
		readToolInput(p, raw.ToolInput)
	}
	if len(p.Paths) > maxPaths {
		p.Paths = p.Paths[:maxPaths]
	}
	return p, nil
}

// readToolInput takes the paths and the command out of a tool's input: an
// object (Claude Code, Codex, Gemini CLI, Cursor's preToolUse) or a JSON
// string holding one (Cursor's MCP events).
func readToolInput(p *Payload, data json.RawMessage) {
	var s string
	if json.Unmarshal(data, &s) == nil {
		data = json.RawMessage(s)
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(data, &in) != nil {
		return
	}
	str := func(k string) string {
		var v string
		_ = json.Unmarshal(in[k], &v)
		return v
	}
	for _, k := range []string{"file_path", "path", "notebook_path", "filePath", "target_file", "absolute_path"} {
		if v := str(k); v != "" {
			p.Paths = append(p.Paths, v)
		}
	}
	var edits []struct {
		FilePath string `json:"file_path"`
	}
	if json.Unmarshal(in["edits"], &edits) == nil {
		for _, e := range edits {
			if e.FilePath != "" {
				p.Paths = append(p.Paths, e.FilePath)
			}
		}
	}
	cmd := str("command")
	if cmd == "" {
		// Codex's shell tool takes argv.
		var argv []string
		if json.Unmarshal(in["command"], &argv) == nil {
			cmd = strings.Join(argv, " ")
		}
	}
	if cmd == "" {
		cmd = str("patch") + str("input")
	}
	if cmd != "" {
		p.Command = cmd
	}
	for _, m := range patchFile().FindAllStringSubmatch(p.Command, maxPaths) {
		p.Paths = append(p.Paths, strings.TrimSpace(m[1]+m[2]))
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// Answer is what a hook says back, in words the face chose.
type Answer struct {
	// Context is told to the agent at the start of its session.
	Context string
	// Continue, when set, keeps the agent going at a stop: it is the
	// agent's next task.
	Continue string
	// Deny, when set, refuses the tool about to run, saying why.
	Deny string
	// Message is shown to the user, not the agent.
	Message string
}

// Encode writes the answer in the agent's format for event ev: one JSON
// object, "{}" when there is nothing to say.
func (a *Agent) Encode(ev Event, ans Answer) []byte {
	out := ordered{}
	switch ev {
	case SessionStart:
		if ans.Context != "" {
			if a.Name == "cursor" {
				out = append(out, field{"additional_context", ans.Context})
			} else {
				out = append(out, field{"hookSpecificOutput", ordered{{"hookEventName", a.HookEvent(ev)}, {"additionalContext", ans.Context}}})
			}
		}
	case Stop:
		if ans.Continue != "" {
			switch a.Name {
			case "cursor":
				out = append(out, field{"followup_message", ans.Continue})
			case "gemini":
				// AfterAgent's deny rejects the answer and sends the reason
				// as the next prompt.
				out = append(out, field{"decision", "deny"}, field{"reason", ans.Continue})
			default:
				out = append(out, field{"decision", "block"}, field{"reason", ans.Continue})
			}
		}
	case PreTool:
		if ans.Deny != "" {
			switch a.Name {
			case "cursor":
				out = append(out, field{"permission", "deny"}, field{"user_message", ans.Deny}, field{"agent_message", ans.Deny})
			case "gemini":
				out = append(out, field{"decision", "deny"}, field{"reason", ans.Deny})
			default:
				out = append(out, field{"hookSpecificOutput", ordered{{"hookEventName", a.HookEvent(ev)},
					{"permissionDecision", "deny"}, {"permissionDecisionReason", ans.Deny}}})
			}
		}
	}
	if ans.Message != "" && a.Name != "cursor" {
		out = append(out, field{"systemMessage", ans.Message})
	}
	b, _ := json.Marshal(out)
	return append(b, '\n')
}
