package main

import (
	"os"
	"strings"
	"testing"

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
