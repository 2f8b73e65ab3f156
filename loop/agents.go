package loop

import (
	"sort"
	"strings"
)

// AgentPresets are the --agent lines of the agent CLIs docs/agents.md
// describes, each in its documented headless mode, given the cycle's brief
// as its task. run --agent-preset NAME (or evolve.agentPreset) runs one.
var AgentPresets = map[string]string{
	// Claude Code's print mode; edits accepted, the tools a cycle needs
	// allowed without a prompt nobody would answer.
	"claude": `claude -p "$(cat "$EVOLVE_BRIEF")" --permission-mode acceptEdits --allowedTools "Bash,Edit,Write,Read" --output-format text`,
	// Codex CLI's exec; --full-auto is the workspace-write sandbox, which
	// keeps .git read-only: nothing the brief asks needs it.
	"codex": `codex exec --full-auto "$(cat "$EVOLVE_BRIEF")"`,
	// aider commits by itself, with --no-verify: the prepare-commit-msg
	// hook init installs gives those commits the cycle's trailers.
	"aider": `aider --yes-always --no-check-update --no-pretty --message-file "$EVOLVE_BRIEF"`,
	// Cursor's CLI in print mode; --force runs its tool calls, --trust the
	// workspace, without prompting.
	"cursor": `cursor-agent -p --force --trust --output-format text "$(cat "$EVOLVE_BRIEF")"`,
	// OpenHands headless always approves its actions; the task from the
	// brief's file.
	"openhands": `openhands --headless -f "$EVOLVE_BRIEF"`,
}

// PresetNames are the presets' names, sorted.
func PresetNames() string {
	names := make([]string, 0, len(AgentPresets))
	for n := range AgentPresets {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}
