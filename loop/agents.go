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
	// Codex CLI's exec in the workspace-write sandbox (what --full-auto
	// was, before Codex took that flag away), which keeps .git read-only:
	// nothing the brief asks needs it. Its stdin is no terminal: it would
	// read it as more of the task, so it is given none.
	"codex": `codex exec --sandbox workspace-write "$(cat "$EVOLVE_BRIEF")" </dev/null`,
	// aider commits by itself, with --no-verify: the prepare-commit-msg
	// hook init installs gives those commits the cycle's trailers.
	"aider": `aider --yes-always --no-check-update --no-pretty --message-file "$EVOLVE_BRIEF"`,
	// Cursor's CLI in print mode; --force runs its tool calls, --trust the
	// workspace, without prompting. Its installer names it agent today,
	// cursor-agent before: whichever is on PATH.
	"cursor": `"$(command -v cursor-agent || echo agent)" -p --force --trust --output-format text "$(cat "$EVOLVE_BRIEF")"`,
	// OpenHands headless always approves its actions; the task from the
	// brief's file; the model and its key from the environment (LLM_MODEL,
	// LLM_API_KEY), as a run on a server has them.
	"openhands": `openhands --headless --override-with-envs -f "$EVOLVE_BRIEF"`,
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
