package loop

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseContract(t *testing.T) {
	profile := "---\n" +
		"startup_reads: [README.md, docs/architecture.md]\n" +
		"---\n" +
		"# Repo execution profile\n\n" +
		"Some prose about the repository.\n\n" +
		"## Validation commands\n\n" +
		"1. `go test ./...`\n" +
		"2. `make lint`\n\n" +
		"And prose again, which ends the list.\n" +
		"- not an item of any field\n\n" +
		"**definition_of_done**:\n" +
		"  - every goal passes\n" +
		"  - docs updated\n" +
		"tracker_commands: bd ready\n"
	got := ParseContract(ProfileFile, []byte(profile))
	want := Contract{Path: ProfileFile,
		StartupReads:       []string{"README.md", "docs/architecture.md"},
		ValidationCommands: []string{"go test ./...", "make lint"},
		DefinitionOfDone:   []string{"every goal passes", "docs updated"},
		TrackerCommands:    []string{"bd ready"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseContract:\n got %#v\nwant %#v", got, want)
	}
	if miss := got.Missing(ProfileRequired); len(miss) != 0 {
		t.Errorf("Missing = %v, want none", miss)
	}
	program := "# PROGRAM\n\n## Mutable scope\n\n- `cli/**`\n- `docs/*.md`\n- anything reasonable\n\n## Stop conditions\n\n- all goals pass\n"
	p := ParseContract(ProgramFile, []byte(program))
	if want := []string{"cli/**", "docs/*.md", "anything reasonable"}; !reflect.DeepEqual(p.MutableScope, want) {
		t.Errorf("mutable_scope = %q, want %q", p.MutableScope, want)
	}
	if miss := p.Missing(ProfileRequired); !reflect.DeepEqual(miss, ProfileRequired) {
		t.Errorf("Missing = %v, want %v", miss, ProfileRequired)
	}
}

func TestInScope(t *testing.T) {
	scope := []string{"cli/**", "docs/*.md", "Makefile", "skills/", "anything reasonable", "pkg/**/*_test.go"}
	for p, want := range map[string]bool{
		"cli/main.go":              true,
		"cli/cmd/deep/x.go":        true,
		"cli":                      true,
		"client/x.go":              false,
		"docs/a.md":                true,
		"docs/sub/a.md":            false,
		"Makefile":                 true,
		"skills/evolve/SKILL.md":   true,
		"README.md":                false,
		"pkg/a/b_test.go":          true,
		"pkg/a/b.go":               false,
		"anything reasonable":      false,
		"anything reasonable/x.go": false,
	} {
		if got := inScope(scope, p); got != want {
			t.Errorf("inScope(%q) = %v, want %v", p, got, want)
		}
	}
	if !inScope([]string{"."}, "any/where") {
		t.Error(`inScope(".") is not everything`)
	}
}

func FuzzParseContract(f *testing.F) {
	for _, s := range []string{"## startup_reads\n- `a`\n", "mutable_scope: [a, b]\n", "validation_commands:\n  - make\n", "# x\n\x1b[31m- y\n", "definition_of_done: \xff\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := ParseContract("f", []byte(s))
		for _, items := range [][]string{c.StartupReads, c.ValidationCommands, c.TrackerCommands, c.DefinitionOfDone, c.MutableScope, c.DecisionPolicy, c.StopConditions} {
			if len(items) > maxContractItems {
				t.Fatalf("%d items", len(items))
			}
			for _, it := range items {
				if it == "" || len(it) > maxContractItem || strings.ContainsAny(it, "\n\r\x1b") || !utf8.ValidString(it) {
					t.Fatalf("item %q is not bounded and clean", it)
				}
			}
		}
	})
}
