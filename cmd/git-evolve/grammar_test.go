package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// A start builds kong's model of the one command named; what it prints
// for help and for usage errors must be what the whole grammar prints.
func TestOneCommandAnswersAsTheWholeGrammar(t *testing.T) {
	var c cli
	whole, err := kong.New(&c, kong.Name("git-evolve"), helpVars)
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	for _, cmd := range whole.Model.Children {
		if cmd.Type != kong.CommandNode {
			continue
		}
		var cc cli
		if _, ok := oneCommand(&cc, []string{"-C", ".", cmd.Name}); !ok && cmd.Name != "help" {
			t.Errorf("%s: not found by oneCommand", cmd.Name)
		}
		for _, args := range [][]string{{cmd.Name, "--help"}, {cmd.Name, "--no-such-flag"}} {
			var pruned, full bytes.Buffer
			codeP := run(args, strings.NewReader(""), &pruned, &pruned, getenv)
			wholeGrammar = true
			codeF := run(args, strings.NewReader(""), &full, &full, getenv)
			wholeGrammar = false
			if codeP != codeF || pruned.String() != full.String() {
				t.Errorf("%v: one command gave exit %d:\n%s\nthe whole grammar exit %d:\n%s", args, codeP, pruned.String(), codeF, full.String())
			}
		}
	}
	for _, args := range [][]string{{"log"}, {"--color", "log"}, {"--help"}, {"help"}, {"lgo"}, {"--", "log"}} {
		var cc cli
		_, ok := oneCommand(&cc, args)
		if want := len(args) == 1 && args[0] == "log"; ok != want {
			t.Errorf("oneCommand(%q) = %v, want %v", args, ok, want)
		}
	}
}
