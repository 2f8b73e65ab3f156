package main

import (
	"strings"
	"testing"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/internal/manpage"
)

// Every command has its manual page, made from its definition: every flag,
// argument and subcommand is on it, and no text is read as a roff request.
func TestManPagesFollowTheCommands(t *testing.T) {
	root, err := fullModel()
	if err != nil {
		t.Fatal(err)
	}
	pages := manpage.Pages(root, description, "1.2.3")
	macros := []string{".TH ", ".SH ", ".TP", ".B ", ".I ", ".PP", ".nf", ".fi", ".ad l", ".nh"}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		name := "git-evolve"
		if n != root {
			name += "-" + strings.ReplaceAll(n.Path(), " ", "-")
		}
		page, ok := pages[name+".1"]
		if !ok {
			t.Errorf("no page %s.1", name)
			return
		}
		text := string(page)
		for _, f := range n.Flags {
			if !f.Hidden && !strings.Contains(text, `\-\-`+manpage.Roff(f.Name)) {
				t.Errorf("%s.1 does not name --%s", name, f.Name)
			}
		}
		for _, p := range n.Positional {
			if !strings.Contains(text, manpage.Roff(p.Summary())) {
				t.Errorf("%s.1 does not name %s", name, p.Summary())
			}
		}
		for _, line := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
			if (strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'")) && !hasAnyPrefix(line, macros) {
				t.Errorf("%s.1: a line roff reads as a request: %q", name, line)
			}
		}
		for _, c := range n.Children {
			if c.Type != kong.CommandNode {
				continue
			}
			if c.Hidden {
				if _, ok := pages["git-evolve-"+strings.ReplaceAll(c.Path(), " ", "-")+".1"]; ok {
					t.Errorf("a page for the hidden %s", c.Path())
				}
				continue
			}
			if !strings.Contains(text, ".B "+manpage.Roff(c.Name)+"\n") {
				t.Errorf("%s.1 does not list %s", name, c.Name)
			}
			walk(c)
		}
	}
	walk(root)
	if !strings.Contains(string(pages["git-evolve.1"]), `"git-evolve 1.2.3"`) {
		t.Error("git-evolve.1 does not carry the version")
	}
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
