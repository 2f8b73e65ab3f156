package completion

import (
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

type testCLI struct {
	Color string `enum:"auto,always,never" default:"auto" help:"Colour."`

	Log struct {
		Target string `complete:"goals" help:"Only this target."`
		Result string `complete:"results" help:"Only this result."`
		Limit  int    `short:"n" help:"At most N."`
	} `cmd:"" help:"List."`
	Show struct {
		Cycle string `arg:"" complete:"cycles" help:"The cycle."`
	} `cmd:"" help:"Show."`
	Sync struct {
		Remote []string `arg:"" optional:"" complete:"remotes" help:"Remotes."`
	} `cmd:"" help:"Sync."`
	Help struct {
		Command string `arg:"" optional:"" complete:"commands" help:"A command."`
	} `cmd:"" help:"Help."`
	Secret struct{} `cmd:"" hidden:"" help:"Hidden."`
}

func lookup(tag string) []string {
	return map[string][]string{"goals": {"tests", "lint"}, "cycles": {"3", "2", "1"}, "remotes": {"origin", "fork"}}[tag]
}

func TestComplete(t *testing.T) {
	var c testCLI
	k, err := kong.New(&c, kong.Name("git-evolve"))
	if err != nil {
		t.Fatal(err)
	}
	root := k.Model.Node
	for _, tc := range []struct {
		line  string   // bash
		words []string // zsh and fish
		want  string
	}{
		{line: "git evolve ", want: "log show sync help"},
		{line: "git evolve s", want: "show sync"},
		{line: "git-evolve sh", want: "show"},
		{line: "git -C x evolve log --", want: "--target --result --limit --help --color"},
		{line: "git evolve log -", want: "--target --result --limit -n --help -h --color"},
		{line: "git evolve log --target ", want: "tests lint"},
		{line: "git evolve log --target l", want: "lint"},
		{line: "git evolve log --result=reg", want: "regressed"},
		{words: []string{"--", "git", "evolve", "log", "--result=reg"}, want: "--result=regressed"},
		{line: "git evolve --color ", want: "auto always never"},
		{line: "git evolve show ", want: "3 2 1"},
		{line: "git evolve show 3 ", want: ""},
		{line: "git evolve sync origin ", want: "origin fork"},
		{line: "git evolve help ", want: "log show sync help"},
		{line: "git evolve log -n ", want: ""},
		{words: []string{"git", "evolve", "sh"}, want: "show"},
		{words: nil, want: "log show sync help"},
	} {
		got := strings.Join(Complete(root, tc.line, tc.words, lookup), " ")
		if got != tc.want {
			t.Errorf("Complete(%q, %q) = %q, want %q", tc.line, tc.words, got, tc.want)
		}
	}
	// Without a lookup, what the repository holds completes nothing.
	if got := Complete(root, "git evolve show ", nil, nil); len(got) != 0 {
		t.Errorf("with no lookup: %q", got)
	}
}

// Each shell's script asks git evolve __complete; no other shell has one.
func TestScript(t *testing.T) {
	for _, sh := range Shells {
		if !strings.Contains(Script(sh), "git evolve __complete") {
			t.Errorf("the %s script does not ask git evolve __complete", sh)
		}
	}
	if Script("tcsh") != "" || slices.Contains(Shells, "tcsh") {
		t.Error("a script for tcsh")
	}
}
