// Package manpage renders git-evolve's manual pages (roff, section 1)
// from the kong model of its commands, the same definitions --help prints:
// one page for git-evolve and one for each command that is not hidden
// (git-evolve-log.1, git-evolve-cycle-start.1, …), each with its synopsis,
// description, subcommands, arguments, options, the global options and the
// exit status; and installs them where man looks. Text from the model is
// escaped so that roff reads no line of it as a request.
package manpage

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/alecthomas/kong"
)

// Install writes pages (by file name) into dir, creating it, and reports
// whether man finds git-evolve's page there (man -w, with the environment
// this process has).
func Install(dir string, pages map[string][]byte) (found bool, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	for name, page := range pages {
		if err := os.WriteFile(filepath.Join(dir, name), page, 0o644); err != nil {
			return false, err
		}
	}
	want := filepath.Join(dir, "git-evolve.1")
	cmd := exec.Command("man", "-w", "git-evolve")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	return err == nil && sameFile(strings.TrimSpace(string(out)), want), nil
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Pages are the manual pages of the command tree at root, by file name:
// one for git-evolve, one for each command (hidden ones left out).
// description is git-evolve's own (its page's DESCRIPTION), version the
// one the pages' footers name.
func Pages(root *kong.Node, description, version string) map[string][]byte {
	pages := map[string][]byte{}
	var walk func(n *kong.Node)
	walk = func(n *kong.Node) {
		name := "git-evolve"
		if n != root {
			name += "-" + strings.ReplaceAll(n.Path(), " ", "-")
		}
		pages[name+".1"] = manPage(root, n, name, description, version)
		for _, c := range n.Children {
			if c.Type == kong.CommandNode && !c.Hidden {
				walk(c)
			}
		}
	}
	walk(root)
	return pages
}

func manPage(root, n *kong.Node, name, description, version string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, ".TH %s 1 \"\" \"git-evolve %s\" \"Git Evolve Manual\"\n", strings.ToUpper(name), Roff(version))
	b.WriteString(".ad l\n.nh\n") // ragged right, no hyphens: as git's pages read
	b.WriteString(".SH NAME\n")
	summary := n.Help
	if n == root {
		summary = "the harness and the shared ledger for evolve loops"
	}
	fmt.Fprintf(&b, "%s \\- %s\n", name, Roff(strings.TrimSuffix(summary, ".")))
	b.WriteString(".SH SYNOPSIS\n")
	usage := "git evolve"
	if n != root {
		usage = "git evolve " + n.Path()
	}
	if len(n.Flags) > 0 || n != root {
		usage += " [options]"
	}
	var subs []*kong.Node
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && !c.Hidden {
			subs = append(subs, c)
		}
	}
	if len(subs) > 0 {
		usage += " <command>"
	}
	for _, p := range n.Positional {
		usage += " " + p.Summary()
	}
	fmt.Fprintf(&b, ".B %s\n", Roff(usage))
	b.WriteString(".SH DESCRIPTION\n")
	text := n.Detail
	if n == root {
		text = description
	}
	if text == "" {
		text = n.Help
	}
	paragraphs(&b, text)
	if len(subs) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, c := range subs {
			fmt.Fprintf(&b, ".TP\n.B %s\n%s\nSee \\fB%s\\fR(1).\n", Roff(c.Name), Roff(c.Help),
				"git-evolve-"+strings.ReplaceAll(c.Path(), " ", "-"))
		}
	}
	if len(n.Positional) > 0 {
		b.WriteString(".SH ARGUMENTS\n")
		for _, p := range n.Positional {
			fmt.Fprintf(&b, ".TP\n.I %s\n%s\n", Roff(p.Summary()), Roff(p.Help))
		}
	}
	var flags []*kong.Flag
	for _, f := range n.Flags {
		if !f.Hidden {
			flags = append(flags, f)
		}
	}
	if len(flags) > 0 || n == root {
		b.WriteString(".SH OPTIONS\n")
		for _, f := range flags {
			flagItem(&b, f)
		}
	}
	if n != root {
		b.WriteString(".SH GLOBAL OPTIONS\n")
		for _, f := range root.Flags {
			if !f.Hidden {
				flagItem(&b, f)
			}
		}
	}
	b.WriteString(".SH EXIT STATUS\n0 ok, 1 runtime error, 2 integrity breach, 3 recoverable failure (a cycle regressed and was reverted), 4 halted, 5 paused, 10 usage error.\n")
	b.WriteString(".SH SEE ALSO\n")
	if n == root {
		b.WriteString("\\fBgit\\fR(1), \\fBgit-notes\\fR(1)\n")
	} else {
		b.WriteString("\\fBgit-evolve\\fR(1)\n")
	}
	return b.Bytes()
}

func flagItem(b *bytes.Buffer, f *kong.Flag) {
	name := "\\-\\-" + Roff(f.Name)
	if f.Short != 0 {
		name = "\\-" + string(f.Short) + ", " + name
	}
	for _, a := range f.Aliases {
		name += ", \\-\\-" + Roff(a)
	}
	fmt.Fprintf(b, ".TP\n.B %s", name)
	if !f.IsBool() && !f.IsCounter() {
		fmt.Fprintf(b, " \\fI%s\\fR", Roff(f.FormatPlaceHolder()))
	}
	b.WriteString("\n")
	help := f.Help
	if f.Default != "" && !f.IsBool() {
		help += " (default: " + f.Default + ")"
	}
	fmt.Fprintf(b, "%s\n", Roff(help))
}

// paragraphs writes text's paragraphs (blank-line separated); indented
// lines are kept as they are laid out (examples, lists).
func paragraphs(b *bytes.Buffer, text string) {
	for i, para := range strings.Split(strings.TrimSpace(text), "\n\n") {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		lines := strings.Split(para, "\n")
		literal := false
		for _, l := range lines {
			if strings.HasPrefix(l, " ") {
				literal = true
			}
		}
		if literal {
			b.WriteString(".nf\n")
		}
		for _, l := range lines {
			b.WriteString(Roff(l) + "\n")
		}
		if literal {
			b.WriteString(".fi\n")
		}
	}
}

// Roff escapes text for a roff line: backslashes and hyphens, and a line
// that would start with a control character.
func Roff(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
