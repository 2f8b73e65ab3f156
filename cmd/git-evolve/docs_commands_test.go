package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/alecthomas/kong"
)

// notCommands are the commands the documentation names that are not
// git-evolve's to run: one it names to say that it does not exist ("there
// is no git evolve pause"), or git's own beside ours, by the words after
// git evolve (or the whole code span). Keep it short: a command the docs
// name is one that works.
var notCommands = map[string]bool{
	"log -20": true, // git's log, beside ours in docs/benchmarks.md
}

// Every `git evolve …` that README.md and docs/*.md name, in a code span or
// a code block (and every code span that starts with a command's name,
// such as `cycle start --claim`), is a command that exists and answers -h
// with exit 0, and every flag the docs give it (in the same span or line,
// or in the same row of a table whose first cell names it) is one it takes.
func TestDocsNameRealCommands(t *testing.T) {
	root, err := fullModel()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append([]string{"../../README.md"}, files...)
	helped := map[string]string{} // command path → "" when -h answers, else why not
	seen := 0
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(file, "../../")
		for _, dc := range docCommands(string(src)) {
			if !ours(root, dc) {
				continue
			}
			seen++
			where := fmt.Sprintf("%s:%d: `git evolve %s`", name, dc.line, dc.text)
			if dc.bare {
				where = fmt.Sprintf("%s:%d: `%s`", name, dc.line, dc.text)
			}
			paths, problems := resolveDocCommand(root, dc)
			for _, p := range problems {
				t.Errorf("%s: %s", where, p)
			}
			for _, path := range paths {
				key := strings.Join(path, " ")
				why, ok := helped[key]
				if !ok {
					why = answersHelp(path)
					helped[key] = why
				}
				if why != "" {
					t.Errorf("%s: git evolve %s -h %s", where, key, why)
				}
			}
		}
	}
	if seen < 100 {
		t.Errorf("found only %d commands in the docs: the scan is broken", seen)
	}
}

// ours reports whether a doc command is one to check: not in notCommands,
// and, named without git evolve, one whose first word is a command of ours
// (not `git log`, `go test -json`).
func ours(root *kong.Node, dc docCommand) bool {
	if notCommands[dc.text] {
		return false
	}
	return !dc.bare || len(dc.words) > 0 && child(root, dc.words[0].s) != nil
}

// answersHelp runs git evolve path… -h in process: "" when it exits 0 with
// the command's usage, else what it did.
func answersHelp(path []string) string {
	var out, errs bytes.Buffer
	code := run(append(slices.Clone(path), "-h"), strings.NewReader(""), &out, &errs, func(string) string { return "" })
	usage := strings.TrimSpace("Usage: git-evolve " + strings.Join(path, " "))
	switch {
	case code != exitOK:
		return fmt.Sprintf("exits %d: %s", code, strings.TrimSpace(errs.String()))
	case !strings.HasPrefix(out.String(), usage):
		return fmt.Sprintf("prints %q, not %q", firstLine(out.String()), usage)
	}
	return ""
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// docCommand is one git evolve command the docs name: the words after
// "git evolve", and the flags named beside it (the other code spans of a
// table row whose first cell is the command).
type docCommand struct {
	line   int
	text   string // as written after git evolve, for messages
	words  []docWord
	beside []string // flags named beside it
	bare   bool     // named without "git evolve": a command only if its first word is one
}

type docWord struct {
	s      string
	quoted bool
}

// docCommands finds the git evolve commands of a Markdown document: in
// fenced code blocks (each up to the end of its shell command) and in code
// spans (each up to the end of the span).
func docCommands(src string) []docCommand {
	var out []docCommand
	lines := strings.Split(src, "\n")
	// Code blocks first; their lines are blanked for the code spans' scan.
	fence := ""
	prose := make([]string, len(lines))
	for i, line := range lines {
		trimmed := strings.TrimSpace(line)
		if fence == "" && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			fence = trimmed[:3]
			continue
		}
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
				continue
			}
			for _, text := range afterGitEvolve(line) {
				out = append(out, newDocCommand(i+1, text, false))
			}
			continue
		}
		prose[i] = line
	}
	// Code spans, which may run over a line end within a paragraph.
	text := strings.Join(prose, "\n")
	lineAt := func(off int) int { return strings.Count(text[:off], "\n") + 1 }
	for _, m := range codeSpan.FindAllStringSubmatchIndex(text, -1) {
		span := text[m[2]:m[3]]
		if strings.Contains(span, "\n\n") {
			continue
		}
		span = strings.ReplaceAll(span, "\n", " ")
		rests := afterGitEvolve(span)
		for _, rest := range rests {
			dc := newDocCommand(lineAt(m[0]), rest, true)
			dc.beside = besideInRow(text, m[0], m[1])
			out = append(out, dc)
		}
		if len(rests) == 0 && !strings.HasPrefix(span, " ") {
			// a command named without git evolve: `cycle start --claim`
			dc := newDocCommand(lineAt(m[0]), span, true)
			dc.bare = true
			out = append(out, dc)
		}
	}
	return out
}

func newDocCommand(line int, text string, span bool) docCommand {
	dc := docCommand{line: line, words: docWords(text, span)}
	var ws []string
	for _, w := range dc.words {
		ws = append(ws, w.s)
	}
	dc.text = strings.Join(ws, " ")
	return dc
}

var codeSpan = regexp.MustCompile("`([^`]+)`")

// gitEvolve is "git evolve" as a command: not inside another word.
var gitEvolve = regexp.MustCompile(`(^|[\s("'$])git evolve(\s|$)`)

// afterGitEvolve is what follows each "git evolve" in s.
func afterGitEvolve(s string) []string {
	var out []string
	for _, m := range gitEvolve.FindAllStringIndex(s, -1) {
		end := m[1]
		if end > 0 && unicode.IsSpace(rune(s[end-1])) {
			end--
		}
		out = append(out, s[end:])
	}
	return out
}

// besideInRow is the flags in the other code spans of the Markdown table
// row of the span at [start, end), when it is the row's first cell.
func besideInRow(text string, start, end int) []string {
	lineStart := strings.LastIndexByte(text[:start], '\n') + 1
	lineEnd := len(text)
	if i := strings.IndexByte(text[end:], '\n'); i >= 0 {
		lineEnd = end + i
	}
	row := text[lineStart:lineEnd]
	if !strings.HasPrefix(row, "|") {
		return nil
	}
	first, rest, ok := strings.Cut(strings.ReplaceAll(row[1:], `\|`, "\x00"), "|")
	if !ok || !strings.HasPrefix(strings.TrimSpace(first), "`git evolve ") || lineStart+1+len(first) < end {
		return nil
	}
	var flags []string
	for _, m := range codeSpan.FindAllStringSubmatch(strings.ReplaceAll(rest, "\x00", `\|`), -1) {
		for _, w := range docWords(m[1], true) {
			if len(w.s) > 1 && strings.HasPrefix(w.s, "-") && !w.quoted {
				flags = append(flags, w.s)
			}
		}
	}
	return flags
}

// docWords splits a command as the shell does, up to the end of its
// command (a comment, ;, &&, ||, a pipe, a redirection, a closing
// parenthesis). In a code span (span) a | stands for alternatives, as in
// stop|kill, and \| (a pipe escaped in a table) too.
func docWords(s string, span bool) []docWord {
	if span {
		s = strings.ReplaceAll(s, `\|`, "|")
	}
	var out []docWord
	var cur strings.Builder
	quoted, in := false, false
	var quote rune
	flush := func() {
		if in {
			out = append(out, docWord{cur.String(), quoted})
		}
		cur.Reset()
		quoted, in = false, false
	}
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, quoted, in = r, true, true
		case unicode.IsSpace(r):
			flush()
		case r == '#' && !in, r == ';', r == '&', r == ')', r == '>' && !in,
			r == '|' && !span:
			flush()
			return out
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	flush()
	return out
}

// placeholder reports whether a word stands for something the user gives
// (<cycle>, [reason], N, CMD, 12, '…', $(…)) rather than a command's name.
func placeholder(w docWord) bool {
	if w.quoted || strings.ContainsAny(w.s, "<>[]{}$…*=/.") {
		return true
	}
	return strings.IndexFunc(w.s, unicode.IsLower) < 0
}

// resolveDocCommand walks a doc command's words through the grammar: the
// command paths it names (more than one for stop|kill), and its problems:
// a word that names no command, a flag the command does not take.
func resolveDocCommand(root *kong.Node, dc docCommand) (paths [][]string, problems []string) {
	nodes := []*kong.Node{root}
	commands := true // still reading command names
	for i := 0; i < len(dc.words); i++ {
		w := dc.words[i]
		if strings.HasPrefix(w.s, "[-") { // [--target ID]
			w.s = strings.TrimSuffix(w.s[1:], "]")
		}
		switch {
		case w.s == "--":
			commands = false
		case strings.HasPrefix(w.s, "-") && len(w.s) > 1 && !w.quoted:
			takesValue := false
			for _, n := range nodes {
				f := findFlag(n, w.s)
				if f == nil {
					problems = append(problems, fmt.Sprintf("%s: git evolve%s takes no such flag", flagName(w.s), pathOf(n)))
					continue
				}
				takesValue = !f.IsBool() && !f.IsCounter() && !strings.Contains(w.s, "=") && !shortWithValue(w.s)
			}
			if takesValue {
				i++
			}
		case commands && !placeholder(w):
			var next []*kong.Node
			for _, n := range nodes {
				if commandChildren(n) == 0 {
					commands = false // an argument of a leaf
					next = nodes
					break
				}
				for _, alt := range strings.Split(w.s, "|") {
					c := child(n, alt)
					if c == nil {
						problems = append(problems, fmt.Sprintf("git evolve%s has no command %q", pathOf(n), alt))
						continue
					}
					next = append(next, c)
				}
			}
			if len(next) == 0 {
				return nil, problems
			}
			nodes = next
		default:
			commands = false
		}
	}
	for _, f := range dc.beside {
		for _, n := range nodes {
			if findFlag(n, f) == nil {
				problems = append(problems, fmt.Sprintf("%s (beside it in the table): git evolve%s takes no such flag", flagName(f), pathOf(n)))
			}
		}
	}
	for _, n := range nodes {
		paths = append(paths, strings.Fields(pathOf(n)))
	}
	return paths, problems
}

func flagName(w string) string {
	name, _, _ := strings.Cut(w, "=")
	return name
}

// shortWithValue reports whether w is a short flag with its value attached
// (-n5).
func shortWithValue(w string) bool {
	return !strings.HasPrefix(w, "--") && len(w) > 2
}

// findFlag is the flag w (--name, --name=value, --no-name, -x, -xVALUE)
// names on n or a command above it, or nil.
func findFlag(n *kong.Node, w string) *kong.Flag {
	name := flagName(w)
	for _, group := range n.AllFlags(false) {
		for _, f := range group {
			switch {
			case strings.HasPrefix(name, "--"):
				long := name[2:]
				if f.Name == long || slices.Contains(f.Aliases, long) ||
					(f.Tag.Negatable != "" && "--"+long == negatedName(f)) {
					return f
				}
			case len(name) >= 2 && f.Short != 0 && rune(name[1]) == f.Short:
				return f
			}
		}
	}
	return nil
}

func negatedName(f *kong.Flag) string {
	if f.Tag.Negatable == "_" { // kong's default: --no-<name>
		return "--no-" + f.Name
	}
	return "--" + f.Tag.Negatable
}

func child(n *kong.Node, name string) *kong.Node {
	for _, c := range n.Children {
		if c.Type == kong.CommandNode && (c.Name == name || slices.Contains(c.Aliases, name)) {
			return c
		}
	}
	return nil
}

func commandChildren(n *kong.Node) int {
	k := 0
	for _, c := range n.Children {
		if c.Type == kong.CommandNode {
			k++
		}
	}
	return k
}

// pathOf is " " and the command names from the root to n ("" for the root).
func pathOf(n *kong.Node) string {
	var names []string
	for ; n != nil && n.Parent != nil; n = n.Parent {
		names = append([]string{n.Name}, names...)
	}
	if len(names) == 0 {
		return ""
	}
	return " " + strings.Join(names, " ")
}

// The scan itself: what it finds in code blocks, code spans and table
// rows, and the mismatches it reports.
func TestDocCommandsFindsMismatches(t *testing.T) {
	root, err := fullModel()
	if err != nil {
		t.Fatal(err)
	}
	doc := "Run `git evolve record --cycle 3 --bogus` or `git\nevolve cycle strat`.\n" +
		"\n```sh\ngit evolve -C repo log -n 3 --since yesterday | less   # git evolve nope\n```\n\n" +
		"| command | what |\n|---|---|\n" +
		"| `git evolve stop\\|kill [reason]` | `--json`; `--accept-remote -m WHY` |\n" +
		"| `git evolve cycle start [--target ID] [--item ID] [--nope]` | see `git evolve cycle start` |\n" +
		"\nThen `cycle start --claimm`, `git log -20` and `log -20`.\n"
	var got []string
	for _, dc := range docCommands(doc) {
		if !ours(root, dc) {
			continue
		}
		paths, problems := resolveDocCommand(root, dc)
		got = append(got, fmt.Sprintf("%d %s %v %v", dc.line, dc.text, paths, problems))
	}
	want := []string{
		`5 -C repo log -n 3 --since yesterday [[log]] []`,
		`5 nope [] [git evolve has no command "nope"]`, // a comment names commands too
		`1 record --cycle 3 --bogus [[record]] [--bogus: git evolve record takes no such flag]`,
		`1 cycle strat [] [git evolve cycle has no command "strat"]`,
		`10 stop|kill [reason] [[stop] [kill]] [` +
			`--json (beside it in the table): git evolve stop takes no such flag ` +
			`--json (beside it in the table): git evolve kill takes no such flag ` +
			`--accept-remote (beside it in the table): git evolve stop takes no such flag ` +
			`--accept-remote (beside it in the table): git evolve kill takes no such flag ` +
			`-m (beside it in the table): git evolve stop takes no such flag ` +
			`-m (beside it in the table): git evolve kill takes no such flag]`,
		`11 cycle start [--target ID] [--item ID] [--nope] [[cycle start]] [--nope: git evolve cycle start takes no such flag]`,
		`11 cycle start [[cycle start]] []`,
		`13 cycle start --claimm [[cycle start]] [--claimm: git evolve cycle start takes no such flag]`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// and in help text, which is prose
	for text, want := range map[string]string{
		"goals check, then":            `[git evolve goals has no command "check"]`,
		"goals measure, then":          `[]`,
		"run --resume continues":       `[]`,
		"--help and git help":          `[]`,
		"'git evolve log --bogus'.":    `[--bogus: git evolve log takes no such flag]`,
		"itself, not its hook":         `[]`,
		"cycle finish. Then the cycle": `[]`,
	} {
		if got := fmt.Sprint(helpMention(root, strings.Fields(strings.TrimPrefix(text, "'git evolve ")))); got != want {
			t.Errorf("help %q: %s, want %s", text, got, want)
		}
	}
}

// Every command, subcommands and hidden ones included, answers -h, --help
// and git evolve help <command> alike: its usage on stdout, nothing on
// stderr, exit 0, in any directory (no repository is opened).
func TestHelpEverywhere(t *testing.T) {
	root, err := fullModel()
	if err != nil {
		t.Fatal(err)
	}
	getenv := func(string) string { return "" }
	var walk func(n *kong.Node)
	n := 0
	walk = func(node *kong.Node) {
		path := strings.Fields(pathOf(node))
		var first string
		for _, args := range [][]string{append(slices.Clone(path), "-h"), append(slices.Clone(path), "--help"), append([]string{"help"}, path...)} {
			var out, errs bytes.Buffer
			code := run(args, strings.NewReader(""), &out, &errs, getenv)
			if code != exitOK || errs.Len() > 0 || !strings.HasPrefix(out.String(), strings.TrimSpace("Usage: git-evolve "+strings.Join(path, " "))) {
				t.Errorf("git evolve %s: exit %d, stdout %q, stderr %q", strings.Join(args, " "), code, firstLine(out.String()), errs.String())
			}
			if first == "" {
				first = out.String()
			} else if out.String() != first {
				t.Errorf("git evolve %s prints other help than git evolve %s -h", strings.Join(args, " "), strings.Join(path, " "))
			}
		}
		n++
		for _, c := range node.Children {
			if c.Type == kong.CommandNode {
				walk(c)
			}
		}
	}
	walk(root)
	if n < 40 {
		t.Errorf("only %d commands walked", n)
	}
}

// What the README and the help say of the demo is how many cycles it runs.
func TestDemoCountSaid(t *testing.T) {
	word := numberWord(demoCycleCount)
	count := regexp.MustCompile(`\b(two|three|four|five|six|seven|eight|nine|ten) (scripted )?cycles\b`)
	// check reports each other count in text, which starts on line
	// (0: text is a line of help).
	check := func(where string, line int, text string) {
		for _, m := range count.FindAllStringSubmatchIndex(text, -1) {
			if text[m[2]:m[3]] != word {
				if line > 0 {
					where = fmt.Sprintf("%s:%d", where, line+strings.Count(text[:m[0]], "\n"))
				}
				t.Errorf("%s: %q: the demo runs %s cycles", where, text[m[0]:m[1]], word)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	line := 1
	for _, para := range strings.Split(string(readme), "\n\n") {
		// a paragraph, or a table row, that speaks of the demo
		for _, part := range strings.Split(para, "\n|") {
			if strings.Contains(part, "demo") {
				check("README.md", line+strings.Count(para[:strings.Index(para, part)], "\n"), part)
			}
		}
		line += strings.Count(para, "\n") + 2
	}
	for _, args := range [][]string{{"-h"}, {"demo", "-h"}} {
		var out bytes.Buffer
		run(args, strings.NewReader(""), &out, &out, func(string) string { return "" })
		if !strings.Contains(out.String(), word+" scripted cycles") {
			t.Errorf("git evolve %s does not say %q:\n%s", strings.Join(args, " "), word+" scripted cycles", out.String())
		}
		for _, l := range strings.Split(out.String(), "\n") {
			if strings.Contains(l, "demo") || strings.Contains(l, "scripted") {
				check("git evolve "+strings.Join(args, " "), 0, l)
			}
		}
	}
}

// helpProse are words that follow "git evolve" in help texts as prose, not
// as a command ("git evolve itself", "the git evolve command of the same
// name").
var helpProse = map[string]bool{"command": true, "itself": true}

// What every command's help names as a git evolve command exists, with the
// flags it gives it. Help is prose: a mention ends at the first word that
// is no command (a leaf's argument, a word of the sentence) or at a
// punctuation mark.
func TestHelpNamesRealCommands(t *testing.T) {
	root, err := fullModel()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	var walk func(node *kong.Node)
	walk = func(node *kong.Node) {
		path := strings.Fields(pathOf(node))
		var out bytes.Buffer
		run(append(slices.Clone(path), "-h"), strings.NewReader(""), &out, &out, func(string) string { return "" })
		for _, line := range strings.Split(out.String(), "\n") {
			for _, rest := range afterGitEvolve(line) {
				n++
				for _, p := range helpMention(root, strings.Fields(rest)) {
					t.Errorf("git evolve%s -h: %q: %s", pathOf(node), strings.TrimSpace(line), p)
				}
			}
		}
		for _, c := range node.Children {
			if c.Type == kong.CommandNode {
				walk(c)
			}
		}
	}
	walk(root)
	if n < 30 {
		t.Errorf("found only %d git evolve commands in the help: the scan is broken", n)
	}
}

// helpMention walks the words after a "git evolve" of help text: the
// problems of the command and flags they name.
func helpMention(root *kong.Node, words []string) (problems []string) {
	node, flags := root, false
	for _, w := range words {
		bare := strings.TrimRight(w, ".,:;)'\"`")
		switch {
		case strings.HasPrefix(bare, "-") && len(bare) > 1:
			if findFlag(node, bare) == nil {
				problems = append(problems, fmt.Sprintf("%s: git evolve%s takes no such flag", flagName(bare), pathOf(node)))
			}
			flags = true
		case flags || commandChildren(node) == 0 || placeholder(docWord{s: bare}) || helpProse[bare]:
			return problems
		default:
			c := child(node, bare)
			if c == nil {
				return append(problems, fmt.Sprintf("git evolve%s has no command %q", pathOf(node), bare))
			}
			node = c
		}
		if bare != w {
			return problems // the end of a clause
		}
	}
	return problems
}

// The README's table of exit codes and the help's list are the codes the
// program exits with.
func TestExitCodesSaid(t *testing.T) {
	codes := []int{exitOK, exitRuntime, exitIntegrity, exitRecoverable, exitHalted, exitPaused, exitUsage}
	var want []string
	for _, c := range codes {
		want = append(want, fmt.Sprint(c))
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README.md has no ## Exit codes section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var inREADME []string
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(table, -1) {
		inREADME = append(inREADME, m[1])
	}
	if !slices.Equal(inREADME, want) {
		t.Errorf("README.md's exit codes are %v, the program's %v", inREADME, want)
	}
	_, list, ok := strings.Cut(strings.Join(strings.Fields(description), " "), "Exit codes: ")
	if !ok {
		t.Fatal("the help says no exit codes")
	}
	var inHelp []string
	for _, m := range regexp.MustCompile(`(?:^|, |\) )(\d+) `).FindAllStringSubmatch(list, -1) {
		inHelp = append(inHelp, m[1])
	}
	if !slices.Equal(inHelp, want) {
		t.Errorf("git evolve -h says exit codes %v, the program's are %v (%q)", inHelp, want, list)
	}
}
