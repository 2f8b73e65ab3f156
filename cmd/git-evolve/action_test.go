package main

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// action.yml is a composite action that installs this module's command,
// fetches the notes and writes the report to the job summary.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Name string
		Runs struct {
			Using string
			Steps []struct {
				Uses, Run, Shell string
			}
		}
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	var all strings.Builder
	for _, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("a run step without a shell: %q", s.Run)
		}
		all.WriteString(s.Run + "\n")
	}
	for _, want := range []string{"go install \"github.com/git-evolve/git-evolve/cmd/git-evolve@", "refs/notes/*:refs/notes/*", "git evolve report --github"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("action.yml does not run %q", want)
		}
	}
}
