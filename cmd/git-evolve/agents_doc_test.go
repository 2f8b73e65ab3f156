package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/git-evolve/git-evolve/agents"
	"github.com/git-evolve/git-evolve/loop"
)

// docs/agents.md shows each preset's line as run --agent-preset runs it
// (a | in a table's cell written \|, as GitHub's tables take it).
func TestAgentPresetsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for name, cmd := range loop.AgentPresets {
		if !strings.Contains(string(doc), "| `"+name+"` | `"+strings.ReplaceAll(cmd, "|", `\|`)+"` |") {
			t.Errorf("docs/agents.md has no row | `%s` | `%s` |", name, cmd)
		}
	}
}

// docs/agents.md shows the transcript of the three-cycle Claude Code
// session as testscripts/agents/session_claude_three_cycles.txtar makes
// it, in a code block.
func TestAgentsSessionTranscript(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	ar, err := txtar.ParseFile("../../testscripts/agents/session_claude_three_cycles.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range ar.Files {
		if f.Name != "transcript.txt" {
			continue
		}
		if !strings.Contains(string(doc), "```\n"+string(f.Data)+"```\n") {
			t.Errorf("docs/agents.md does not show the session's transcript as the test makes it:\n%s", f.Data)
		}
		return
	}
	t.Fatal("the script has no transcript.txt")
}

// docs/agents.md names each agent's files as the agents package installs them.
func TestAgentsFilesDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/agents.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range agents.Names() {
		a, _ := agents.Lookup(name)
		for _, s := range []string{"`" + a.SkillPath() + "`", "`" + a.MCPFile, "`" + a.HooksFile, a.HookEvent(agents.Stop)} {
			if !strings.Contains(string(doc), s) {
				t.Errorf("docs/agents.md does not name %s for %s", s, name)
			}
		}
	}
}
