package goals

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// MarkdownName is the Markdown goals file (format 4 of the evolve-loop
// ecosystem): its "## Gates" table holds the goals, its "## Directives"
// section the numbered directives. GOALS.yaml wins when both exist.
const MarkdownName = "GOALS.md"

// Names are the goals files a repository's root may hold, the one read
// first first.
var Names = []string{FileName, MarkdownName}

// Directive is a numbered entry of GOALS.md's Directives section: work
// that no check measures, steered by its Steer line. A directive whose
// steer is not complete is work for the loop (a directive gap).
type Directive struct {
	Number int    `json:"number"`
	ID     string `json:"id"`
	Title  string `json:"title"`
	// Steer is the first word of the **Steer:** line, lower-cased
	// (increase, decrease, hold, explore, complete), "" when there is
	// none; Metric is what follows it (without its parentheses).
	Steer  string `json:"steer"`
	Metric string `json:"metric,omitempty"`
	// Body is the directive's prose (its Steer and ID lines left out).
	Body string `json:"body,omitempty"`
	Line int    `json:"line"`
}

// Gap reports whether the directive is still work: its steer is not
// complete.
func (d Directive) Gap() bool { return d.Steer != "complete" }

// Gaps are the directives still to do, in their file's order.
func (f *File) Gaps() []Directive {
	var out []Directive
	for _, d := range f.Directives {
		if d.Gap() {
			out = append(out, d)
		}
	}
	return out
}

// Name is the name of the goals file f is read as: GOALS.md or GOALS.yaml.
func (f *File) Name() string {
	if f.Markdown {
		return MarkdownName
	}
	return FileName
}

// IsMarkdown reports whether a goals file's name is a Markdown file's.
func IsMarkdown(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".md") }

var steers = map[string]bool{"increase": true, "decrease": true, "hold": true, "explore": true, "complete": true}

var (
	mdHeading   = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^ {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`) })
	mdDirective = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(\d{1,4})[.)][ \t]+(.+)$`) })
	mdDelimiter = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[ \t]*\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$`)
	})
	mdField = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[ \t]*(?:[-*+][ \t]+)?\*\*([A-Za-z][A-Za-z ]*?):?\*\*:?[ \t]*(.*)$`)
	})
	mdBullet = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*(?:[-*+]|\d{1,4}[.)])[ \t]+(.*)$`) })
)

// mdLine is a line of a Markdown goals file, with its number; fenced code
// blocks are marked so that their lines are never read as structure.
type mdLine struct {
	n      int
	text   string
	fenced bool
}

func splitMarkdown(data []byte) []mdLine {
	text := strings.TrimPrefix(string(data), "\ufeff")
	raw := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	lines := make([]mdLine, len(raw))
	fence := ""
	for i, s := range raw {
		lines[i] = mdLine{n: i + 1, text: s, fenced: fence != ""}
		t := strings.TrimLeft(s, " ")
		if len(s)-len(t) > 3 {
			continue
		}
		for _, ch := range []string{"`", "~"} {
			if !strings.HasPrefix(t, ch+ch+ch) {
				continue
			}
			run := t[:len(t)-len(strings.TrimLeft(t, ch))]
			switch {
			case fence == "":
				fence = run
				lines[i].fenced = true
			case strings.HasPrefix(run, fence) && strings.TrimSpace(t[len(run):]) == "":
				fence = ""
				lines[i].fenced = true
			}
		}
	}
	return lines
}

// parseMarkdown reads a GOALS.md: the mission (a "## Mission" section, or
// the prose between the title and the first section), "## North Stars" and
// "## Anti Stars" (their bullets, kept), "## Directives" and the goals of
// the "## Gates" table (| ID | Check | Weight | Description | Tags |; the
// check in backticks, \| for a pipe in a cell). Other sections are prose
// for people and are not read.
func parseMarkdown(name string, data []byte, f *File) (*File, error) {
	p := &mdParser{found: found{name: name}}
	f.Version, f.Markdown = 4, true
	lines := splitMarkdown(data)
	type section struct {
		title string
		line  int
		body  []mdLine
	}
	var sections []section
	var intro []mdLine
	for _, l := range lines {
		if !l.fenced {
			if m := mdHeading().FindStringSubmatch(l.text); m != nil && len(m[1]) <= 2 {
				if len(m[1]) == 2 {
					sections = append(sections, section{title: strings.ToLower(strings.TrimSpace(m[2])), line: l.n})
				}
				continue
			}
		}
		if len(sections) == 0 {
			intro = append(intro, l)
		} else {
			sections[len(sections)-1].body = append(sections[len(sections)-1].body, l)
		}
	}
	f.Mission = firstParagraph(intro)
	var gates *section
	for i := range sections {
		s := &sections[i]
		switch strings.TrimSuffix(s.title, ":") {
		case "mission":
			f.Mission = firstParagraph(s.body)
		case "vision":
			f.Vision = firstParagraph(s.body)
		case "tagline":
			f.Tagline = firstParagraph(s.body)
		case "north stars", "north star":
			f.NorthStars = bullets(s.body)
		case "anti stars", "anti-stars", "anti star":
			f.AntiStars = bullets(s.body)
		case "pillars":
			f.Pillars = bullets(s.body)
		case "directives":
			f.Directives = p.directives(s.body)
		case "gates":
			if gates != nil {
				p.add(s.line, 1, "a second Gates section (the first is at line %d)", gates.line)
				continue
			}
			gates = s
		}
	}
	if gates == nil {
		p.add(0, 0, "no \"## Gates\" section: no goals to measure (a table | ID | Check | Weight | Description | under ## Gates)")
	} else {
		f.Goals = p.gates(gates.line, gates.body)
	}
	return p.result(f)
}

type mdParser struct {
	found
	// leftOut are the entries (rows, directives) that cannot be read.
	leftOut Problems
}

// leave says why the entry at line is left out.
func (p *mdParser) leave(line, col int, format string, args ...any) {
	p.leftOut = append(p.leftOut, Problem{Path: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

// result is the file read, its entries that cannot be read left out; or,
// when the file itself cannot be (no Gates table, no row of it that can be
// read), every problem found, in the file's order.
func (p *mdParser) result(f *File) (*File, error) {
	if len(p.problems) > 0 {
		p.problems = append(p.problems, p.leftOut...)
		sort.SliceStable(p.problems, func(i, j int) bool { return p.problems[i].Line < p.problems[j].Line })
		return p.found.result(f)
	}
	f.LeftOut = p.leftOut
	return p.found.result(f)
}

func (p *mdParser) add(line, col int, format string, args ...any) {
	p.problems = append(p.problems, Problem{Path: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)})
}

func (p *mdParser) warn(line, col int, format string, args ...any) {
	p.warnings = append(p.warnings, Problem{Path: p.name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...), Warning: true})
}

// firstParagraph is the first run of non-blank prose lines, joined.
func firstParagraph(lines []mdLine) string {
	var words []string
	for _, l := range lines {
		t := strings.TrimSpace(l.text)
		if l.fenced || t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "|") || strings.HasPrefix(t, "<!--") {
			if len(words) > 0 {
				break
			}
			continue
		}
		words = append(words, t)
	}
	return strings.Join(words, " ")
}

// bullets are a section's list items, as text.
func bullets(lines []mdLine) any {
	var out []any
	for _, l := range lines {
		if m := mdBullet().FindStringSubmatch(l.text); m != nil && !l.fenced {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	return out
}

// directives reads the "### N. Title" entries of a Directives section. An
// entry that cannot be read (its heading, its number or its id) is left
// out.
func (p *mdParser) directives(lines []mdLine) []Directive {
	var out []Directive
	seen := map[int]int{}
	ids := map[string]int{}
	var cur *Directive
	var body []string
	bad := false
	flush := func() {
		if cur == nil || bad {
			cur, body, bad = nil, nil, false
			return
		}
		cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
		if cur.ID == "" {
			cur.ID = fmt.Sprintf("directive-%d", cur.Number)
		}
		if first, dup := ids[cur.ID]; dup {
			p.leave(cur.Line, 1, "directive id %q is also used at line %d", cur.ID, first)
		} else {
			ids[cur.ID] = cur.Line
			out = append(out, *cur)
		}
		cur, body = nil, nil
	}
	for _, l := range lines {
		if !l.fenced {
			if m := mdHeading().FindStringSubmatch(l.text); m != nil {
				if len(m[1]) != 3 {
					continue
				}
				flush()
				d := mdDirective().FindStringSubmatch(m[2])
				if d == nil {
					p.leave(l.n, 1, "a directive's heading is \"### N. Title\", not %q", m[2])
					continue
				}
				n, _ := strconv.Atoi(d[1])
				if first, dup := seen[n]; dup {
					p.leave(l.n, 5, "directive %d is also numbered so at line %d", n, first)
					continue
				}
				seen[n] = l.n
				cur = &Directive{Number: n, Title: strings.TrimSpace(d[2]), Line: l.n}
				continue
			}
			if cur != nil {
				if m := mdField().FindStringSubmatch(l.text); m != nil {
					switch strings.ToLower(strings.TrimSpace(m[1])) {
					case "steer":
						cur.Steer, cur.Metric = steer(m[2])
						if !steers[cur.Steer] && !bad {
							p.warn(l.n, strings.Index(l.text, m[2])+1, "directive %d: steer %q is not one of increase, decrease, hold, explore, complete (it is work until it is complete)", cur.Number, m[2])
						}
						continue
					case "directive id", "id":
						id := strings.Trim(strings.TrimSpace(m[2]), "`")
						if !kebab().MatchString(id) {
							p.leave(l.n, strings.Index(l.text, m[2])+1, "directive id %q must be kebab-case (lowercase letters and digits joined by -)", id)
							bad = true
						}
						cur.ID = id
						continue
					}
				}
			}
		}
		if cur != nil {
			body = append(body, l.text)
		}
	}
	flush()
	return out
}

// steer splits a Steer line's value: its first word (lower-cased, without
// punctuation) and the rest, its parentheses removed.
func steer(v string) (word, metric string) {
	v = strings.TrimSpace(strings.Trim(strings.TrimSpace(v), "`*_"))
	first, rest, _ := strings.Cut(v, " ")
	if i := strings.IndexAny(first, "(|,;"); i > 0 {
		first, rest = first[:i], first[i:]+" "+rest
	}
	word = strings.ToLower(strings.TrimRight(first, ".:!,;`*_"))
	rest = strings.TrimSpace(rest)
	if strings.HasPrefix(rest, "(") && strings.HasSuffix(rest, ")") {
		rest = rest[1 : len(rest)-1]
	}
	return word, strings.TrimSpace(rest)
}

// cell is a table cell: its text (\| unescaped, trimmed of spaces and
// tabs) and, for each of its bytes and the end, the column it comes from.
type cell struct {
	text string
	cols []int
}

// col is the column of the cell's byte at off (its first by default).
func (c cell) col(off int) int {
	return c.cols[min(max(off, 0), len(c.cols)-1)]
}

// splitRow splits a table row as GitHub's tables do: at each pipe not
// escaped by a backslash, a leading and a trailing pipe opening and
// closing the row; \| in a cell is a pipe, even between backticks (and
// \\| a backslash and a pipe). It returns the cells and the offsets of the
// pipes it split at.
func splitRow(s string) ([]cell, []int) {
	var cells []cell
	var pipes []int
	var b strings.Builder
	var cols []int
	flush := func(end int) {
		cells = append(cells, cell{b.String(), append(cols, end+1)})
		b.Reset()
		cols = nil
	}
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			cols = append(cols, i+1)
			i++
		case s[i] == '|':
			flush(i)
			pipes = append(pipes, i)
		default:
			b.WriteByte(s[i])
			cols = append(cols, i+1)
		}
	}
	flush(len(s))
	if t := strings.TrimLeft(s, " \t"); len(pipes) > 0 && pipes[0] == len(s)-len(t) {
		cells = cells[1:]
	}
	if len(pipes) > 0 && strings.TrimRight(s[pipes[len(pipes)-1]+1:], " \t") == "" && len(cells) > 0 {
		cells = cells[:len(cells)-1]
	}
	for i, c := range cells {
		lead := len(c.text) - len(strings.TrimLeft(c.text, " \t"))
		t := strings.TrimSpace(c.text[lead:])
		if t == "" {
			lead = 0 // an empty cell is where its pipe opens it
		}
		cells[i] = cell{t, c.cols[lead : lead+len(t)+1]}
	}
	return cells, pipes
}

// span is a code span: where it starts and ends in its text (backticks
// included) and its content.
type span struct {
	start, end int
	content    string
}

// codeSpans finds the code spans of an inline text as CommonMark does: a
// run of n backticks not escaped by a backslash opens a span that the next
// run of exactly n backticks closes; the content loses one space at each
// end when it has one at both and is not only spaces. A run nothing closes
// is text: stray is the offset of the first such run, or -1.
func codeSpans(s string) (spans []span, stray int) {
	stray = -1
	run := func(i int) int {
		n := 0
		for i+n < len(s) && s[i+n] == '`' {
			n++
		}
		return n
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case '\\':
			i += 2
			continue
		case '`':
		default:
			i++
			continue
		}
		n := run(i)
		closed := false
		for j := i + n; j < len(s); {
			if s[j] != '`' {
				j++
				continue
			}
			m := run(j)
			if m == n {
				c := s[i+n : j]
				if len(c) >= 2 && c[0] == ' ' && c[len(c)-1] == ' ' && strings.Trim(c, " ") != "" {
					c = c[1 : len(c)-1]
				}
				spans = append(spans, span{i, j + m, c})
				i, closed = j+m, true
				break
			}
			j += m
		}
		if !closed {
			if stray < 0 {
				stray = i
			}
			i += n
		}
	}
	return spans, stray
}

// codeSpan is the content of a cell that is one code span (`go test`, or
// a span of two backticks around a`b), or the cell as written.
func codeSpan(s string) string {
	if spans, _ := codeSpans(s); len(spans) == 1 && spans[0].start == 0 && spans[0].end == len(s) {
		return spans[0].content
	}
	return s
}

// mdHTML is raw HTML as GitHub's Markdown finds it in a line: an open or a
// closing tag, a comment, a processing instruction, a declaration, CDATA.
var mdHTML = sync.OnceValue(func() *regexp.Regexp {
	const attr = `(?:\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>` + "`" + `]+|'[^']*'|"[^"]*"))?)`
	return regexp.MustCompile(`<[A-Za-z][A-Za-z0-9-]*` + attr + `*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>|<!--[\s\S]*?-->|<\?[\s\S]*?\?>|<![A-Za-z][^>]*>|<!\[CDATA\[[\s\S]*?\]\]>`)
})

// checkCell reads the Check cell of a row. The command is the cell's one
// code span; text beside the span is prose, not run, returned to be warned
// about. A cell without a backtick is the command as written (bare) unless
// GitHub would read HTML in it. A cell of two code spans, a code span not
// closed, HTML outside a code span with no span, or nothing is a problem
// (its column and what is wrong).
func checkCell(c cell) (cmd, prose string, bare bool, col int, problem string) {
	t := c.text
	if strings.Trim(t, "`") == "" {
		return "", "", false, c.col(0), "the check is empty"
	}
	spans, stray := codeSpans(t)
	switch {
	case len(spans) > 1:
		return "", "", false, c.col(0), fmt.Sprintf("the check cell has %d code spans: which one is the command is not clear; write one command (`a && b`) and put the prose in the Description", len(spans))
	case len(spans) == 1:
		s := spans[0]
		if strings.TrimSpace(s.content) == "" {
			return "", "", false, c.col(s.start), "the check is empty"
		}
		before, after := strings.TrimSpace(t[:s.start]), strings.TrimSpace(t[s.end:])
		switch {
		case before != "" && after != "":
			prose = before + " … " + after
		default:
			prose = before + after
		}
		return s.content, prose, false, c.col(0), ""
	case stray >= 0:
		return "", "", false, c.col(stray), "the code span that opens here is not closed (a ` is missing)"
	}
	if loc := mdHTML().FindStringIndex(t); loc != nil {
		return "", "", false, c.col(loc[0]), fmt.Sprintf("the check holds HTML (%s), which GitHub does not show as written: write the command as a code span (between backticks)", shown(t[loc[0]:loc[1]]))
	}
	return t, "", true, c.col(0), ""
}

// pipeInSpan finds the first pipe a row was split at that lies inside a
// code span of the whole line (read as if the pipe did not end a cell):
// the pipe's offset and the span's start, or -1.
func pipeInSpan(line string, pipes []int) (pipe, start int) {
	spans, _ := codeSpans(line)
	k := 0 // both are in the line's order
	for _, s := range spans {
		for k < len(pipes) && pipes[k] <= s.start {
			k++
		}
		if k < len(pipes) && pipes[k] < s.end {
			return pipes[k], s.start
		}
	}
	return -1, -1
}

// shown is s as a message quotes it: as written when it is printable on
// one line, else quoted with Go's escapes.
func shown(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	for _, r := range s {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return strconv.Quote(s)
		}
	}
	return s
}

var gateColumns = map[string]string{
	"id": "id", "check": "check", "weight": "weight", "description": "description", "tags": "tags",
	"type": "type", "pillar": "pillar", "timeout": "timeout", "pass when": "pass_when", "pass_when": "pass_when",
	"added": "added", "owner": "owner", "notes": "notes",
}

// gates reads the goals of the Gates section's table. A row that cannot be
// read is left out (p.leftOut), the others are the goals; a table without
// the required columns, or none of whose rows can be read, is a problem of
// the file.
func (p *mdParser) gates(at int, lines []mdLine) []Goal {
	var header []cell
	var cols []string
	var out []Goal
	seen := map[string]int{}
	i := 0
	for ; i+1 < len(lines); i++ {
		l := lines[i]
		if !l.fenced && strings.Contains(l.text, "|") && mdDelimiter().MatchString(lines[i+1].text) && !lines[i+1].fenced {
			header, _ = splitRow(l.text)
			break
		}
	}
	if header == nil {
		p.add(at, 1, "the Gates section has no table (| ID | Check | Weight | Description |): no goals to measure")
		return nil
	}
	hl := lines[i].n
	if delim, _ := splitRow(lines[i+1].text); len(delim) != len(header) {
		p.warnings = append(p.warnings, Problem{Path: p.name, Line: lines[i+1].n, Col: 1, Warning: true, AsWritten: true,
			Msg: fmt.Sprintf("the delimiter row has %d cell(s), the header %d: GitHub does not show this as a table", len(delim), len(header))})
	}
	has := map[string]bool{}
	for _, c := range header {
		key, ok := gateColumns[strings.ToLower(strings.Trim(c.text, "*_` "))]
		if !ok {
			p.warn(hl, c.col(0), "unknown column %q in the Gates table (known: ID, Check, Weight, Description, Tags, Type, Pillar, Timeout, Pass When)", c.text)
		}
		cols = append(cols, key)
		has[key] = true
	}
	for _, need := range []string{"id", "check", "weight"} {
		if !has[need] {
			p.add(hl, 1, "the Gates table has no %s column (| ID | Check | Weight | Description |)", strings.ToUpper(need[:1])+need[1:])
		}
	}
	if len(p.problems) > 0 {
		return nil
	}
	rows := 0
	for _, l := range lines[i+2:] {
		if l.fenced || strings.TrimSpace(l.text) == "" || !strings.Contains(l.text, "|") {
			break
		}
		rows++
		if g, idCol, ok := p.row(l, cols); ok {
			if first, dup := seen[g.ID]; dup {
				p.leave(l.n, idCol, "goal id %q is also used at line %d", g.ID, first)
				continue
			}
			seen[g.ID] = l.n
			g.Line = l.n
			out = append(out, g)
		}
	}
	switch {
	case rows == 0:
		p.add(hl, 1, "the Gates table has no rows: no goals to measure")
	case len(out) == 0:
		p.add(hl, 1, "no row of the Gates table can be read: no goals to measure")
	}
	return out
}

// row reads a row of the Gates table into a goal, and the column of its
// id; a row with a problem is left out (ok false).
func (p *mdParser) row(l mdLine, cols []string) (g Goal, idCol int, ok bool) {
	g = Goal{Type: "health", Timeout: DefaultTimeout}
	row, pipes := splitRow(l.text)
	var problems, warnings Problems
	bad := func(col int, format string, args ...any) {
		problems = append(problems, Problem{Path: p.name, Line: l.n, Col: col, Msg: fmt.Sprintf(format, args...)})
	}
	checkAt := slices.Index(cols, "check")
	// A pipe between backticks ends a cell on GitHub: when the row comes
	// out wrong for it, that is the one thing to say.
	if pipe, start := pipeInSpan(l.text, pipes); pipe >= 0 {
		_, stray := codeSpans(cellText(row, checkAt))
		if len(row) > len(cols) || stray >= 0 {
			bad(pipe+1, "this | is inside the code span that opens at column %d: GitHub's tables end a cell at every | not escaped, even between backticks; write it \\| (the check still gets a plain |)", start+1)
			p.leftOut = append(p.leftOut, problems...)
			return g, 0, false
		}
	}
	if len(row) > len(cols) {
		extra := row[len(cols):]
		if slices.ContainsFunc(extra, func(c cell) bool { return c.text != "" }) {
			bad(extra[0].col(0), "the row has %d cell(s), the header %d: a | inside a cell is written \\|", len(row), len(cols))
		} else {
			warnings = append(warnings, Problem{Path: p.name, Line: l.n, Col: extra[0].col(0), Msg: fmt.Sprintf("the row has %d cell(s), the header %d: the empty one(s) past the header are ignored", len(row), len(cols)), Warning: true})
		}
	}
	var missing []string
	for j, key := range cols {
		if j >= len(row) {
			if name := map[string]string{"id": "ID", "check": "Check", "weight": "Weight"}[key]; name != "" {
				missing = append(missing, name)
			}
		}
	}
	if len(missing) > 0 {
		names := strings.Join(missing, ", ")
		if k := len(missing) - 1; k > 0 {
			names = strings.Join(missing[:k], ", ") + " or " + missing[k]
		}
		bad(len(l.text)+1, "the row has %d cell(s), the header %d: it has no %s cell", len(row), len(cols), names)
	}
	idCol = 1
	for j, key := range cols {
		if j >= len(row) {
			continue
		}
		c := row[j]
		v := codeSpan(c.text)
		switch key {
		case "id":
			g.ID, idCol = v, c.col(0)
			switch {
			case v == "":
				bad(c.col(0), "the row has no id")
			case !kebab().MatchString(v):
				bad(c.col(0), "id %q must be kebab-case (lowercase letters and digits joined by -)", v)
			}
		case "check":
			cmd, prose, bare, col, problem := checkCell(c)
			if problem != "" {
				bad(col, "%s", problem)
				break
			}
			g.Check = cmd
			switch {
			case prose != "":
				warnings = append(warnings, Problem{Path: p.name, Line: l.n, Col: col, Warning: true,
					Msg: fmt.Sprintf("goal %s: the text outside the check's code span (%q) is prose, not run: the check is %s", shown(g.ID), prose, shown(cmd))})
			case bare:
				warnings = append(warnings, Problem{Path: p.name, Line: l.n, Col: col, Warning: true, AsWritten: true,
					Msg: fmt.Sprintf("goal %s: the check is not a code span: it is run as written, %s (write it between backticks)", shown(g.ID), shown(cmd))})
			}
		case "weight":
			w, err := strconv.Atoi(v)
			if err != nil || w < 1 || w > 10 {
				bad(c.col(0), "weight must be a whole number from 1 to 10, not %q", v)
			}
			g.Weight = w
		case "description":
			g.Description = v
		case "tags":
			for _, t := range strings.Split(v, ",") {
				if t = strings.Trim(strings.TrimSpace(t), "`"); t != "" {
					g.Tags = append(g.Tags, t)
				}
			}
		case "type":
			if v != "" {
				if g.Type = strings.ToLower(v); !goalTypes[g.Type] {
					bad(c.col(0), "type %q must be health, architecture, quality or meta", v)
				}
			}
		case "pillar":
			g.Pillar = v
		case "timeout":
			if v != "" {
				d, err := time.ParseDuration(v)
				if secs, e2 := strconv.ParseFloat(v, 64); e2 == nil {
					d, err = time.Duration(secs*float64(time.Second)), nil
				}
				if err != nil || d <= 0 || d > maxTimeout {
					bad(c.col(0), "timeout must be a duration such as 90s or 5m, or a number of seconds, up to %v", maxTimeout)
				}
				g.Timeout = d
			}
		case "pass_when":
			if v != "" {
				pw, err := ParsePassWhen(v)
				if err != nil {
					bad(c.col(0), "pass_when %q: %v", v, err)
				}
				g.PassWhen = pw
			}
		case "added":
			g.Added = v
		case "owner":
			g.Owner = v
		case "notes":
			g.Notes = v
		}
	}
	if len(problems) > 0 {
		p.leftOut = append(p.leftOut, problems...)
		return g, idCol, false
	}
	p.warnings = append(p.warnings, warnings...)
	return g, idCol, true
}

// cellText is the text of a row's cell j, "" when the row has none.
func cellText(row []cell, j int) string {
	if j < 0 || j >= len(row) {
		return ""
	}
	return row[j].text
}

// Locate names the goals file of the directory dir: GOALS.yaml when it
// exists, else GOALS.md when that does, else GOALS.yaml (to say it is
// missing). Both says both exist: GOALS.yaml is read, GOALS.md is not.
func Locate(dir string) (path string, both bool) {
	yaml, md := filepath.Join(dir, FileName), filepath.Join(dir, MarkdownName)
	_, errY := os.Stat(yaml)
	_, errM := os.Stat(md)
	switch {
	case errY == nil:
		return yaml, errM == nil
	case errM == nil:
		return md, false
	}
	return yaml, false
}

// BothNotice is what a person is told when both goals files exist.
const BothNotice = "both GOALS.yaml and GOALS.md exist: GOALS.yaml is read, GOALS.md is not (remove one to say which holds the goals)"

// ruler is the part of a GOALS.md that decides what runs and how it is
// judged: everything but its Directives sections, which hold no check. A
// directive marked complete (as the brief asks the agent to) changes
// neither the file's trust nor its era. The sections are found as the
// parser finds them, so nothing a check could come from is left out.
func ruler(data []byte) []byte {
	var b strings.Builder
	in := false
	for _, l := range splitMarkdown(data) {
		if !l.fenced {
			if m := mdHeading().FindStringSubmatch(l.text); m != nil && len(m[1]) <= 2 {
				in = len(m[1]) == 2 && strings.TrimSuffix(strings.ToLower(strings.TrimSpace(m[2])), ":") == "directives"
			}
		}
		if !in {
			b.WriteString(l.text)
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// DigestOf names the goals file name's content for trust: the SHA-256 of
// it, or, for a GOALS.md, of its ruler (the Directives left out).
func DigestOf(name string, data []byte) string {
	if IsMarkdown(name) {
		data = ruler(data)
	}
	return Digest(data)
}
