package goals

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
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
	p := &mdParser{found{name: name}}
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

type mdParser struct{ found }

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

// directives reads the "### N. Title" entries of a Directives section.
func (p *mdParser) directives(lines []mdLine) []Directive {
	var out []Directive
	seen := map[int]int{}
	ids := map[string]int{}
	var cur *Directive
	var body []string
	flush := func() {
		if cur == nil {
			return
		}
		cur.Body = strings.TrimSpace(strings.Join(body, "\n"))
		if cur.ID == "" {
			cur.ID = fmt.Sprintf("directive-%d", cur.Number)
		}
		if first, dup := ids[cur.ID]; dup {
			p.add(cur.Line, 1, "directive id %q is also used at line %d", cur.ID, first)
		} else {
			ids[cur.ID] = cur.Line
		}
		out = append(out, *cur)
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
					p.add(l.n, 1, "a directive's heading is \"### N. Title\", not %q", m[2])
					continue
				}
				n, _ := strconv.Atoi(d[1])
				if first, dup := seen[n]; dup {
					p.add(l.n, 5, "directive %d is also numbered so at line %d", n, first)
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
						if !steers[cur.Steer] {
							p.warn(l.n, strings.Index(l.text, m[2])+1, "directive %d: steer %q is not one of increase, decrease, hold, explore, complete (it is work until it is complete)", cur.Number, m[2])
						}
						continue
					case "directive id", "id":
						id := strings.Trim(strings.TrimSpace(m[2]), "`")
						if !kebab().MatchString(id) {
							p.add(l.n, strings.Index(l.text, m[2])+1, "directive id %q must be kebab-case (lowercase letters and digits joined by -)", id)
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

// cell is a table cell: its text (\| unescaped, trimmed) and the column it
// starts at.
type cell struct {
	text string
	col  int
}

// splitRow splits a table row at its unescaped pipes; a leading and a
// trailing pipe open and close the row.
func splitRow(s string) []cell {
	var cells []cell
	var b strings.Builder
	start := 0
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == '|':
			b.WriteByte('|')
			i++
		case s[i] == '|':
			cells = append(cells, cell{b.String(), start + 1})
			b.Reset()
			start = i + 1
		default:
			b.WriteByte(s[i])
		}
	}
	cells = append(cells, cell{b.String(), start + 1})
	if t := strings.TrimSpace(s); strings.HasPrefix(t, "|") {
		cells = cells[1:]
	}
	if t := strings.TrimSpace(s); len(cells) > 0 && strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		cells = cells[:len(cells)-1]
	}
	for i, c := range cells {
		lead := len(c.text) - len(strings.TrimLeft(c.text, " \t"))
		cells[i] = cell{strings.TrimSpace(c.text), c.col + lead}
	}
	return cells
}

// codeSpan is the content of a cell that is one code span (`go test`,
// “ a`b “), or the cell as written.
func codeSpan(s string) string {
	n := len(s) - len(strings.TrimLeft(s, "`"))
	if n == len(s) {
		return "" // `` : an empty span
	}
	if n == 0 || len(s) <= 2*n || !strings.HasSuffix(s, strings.Repeat("`", n)) || strings.HasSuffix(s, strings.Repeat("`", n+1)) {
		return s
	}
	inner := s[n : len(s)-n]
	if strings.Contains(inner, strings.Repeat("`", n)) {
		return s // more than one span
	}
	if len(inner) >= 2 && inner[0] == ' ' && inner[len(inner)-1] == ' ' && strings.TrimSpace(inner) != "" {
		inner = inner[1 : len(inner)-1]
	}
	return inner
}

var gateColumns = map[string]string{
	"id": "id", "check": "check", "weight": "weight", "description": "description", "tags": "tags",
	"type": "type", "pillar": "pillar", "timeout": "timeout", "pass when": "pass_when", "pass_when": "pass_when",
	"added": "added", "owner": "owner", "notes": "notes",
}

// gates reads the goals of the Gates section's table.
func (p *mdParser) gates(at int, lines []mdLine) []Goal {
	var header []cell
	var cols []string
	var out []Goal
	seen := map[string]int{}
	i := 0
	for ; i+1 < len(lines); i++ {
		l := lines[i]
		if !l.fenced && strings.Contains(l.text, "|") && mdDelimiter().MatchString(lines[i+1].text) && !lines[i+1].fenced {
			header = splitRow(l.text)
			break
		}
	}
	if header == nil {
		p.add(at, 1, "the Gates section has no table (| ID | Check | Weight | Description |): no goals to measure")
		return nil
	}
	hl := lines[i].n
	has := map[string]bool{}
	for _, c := range header {
		key, ok := gateColumns[strings.ToLower(strings.Trim(c.text, "*_` "))]
		if !ok {
			p.warn(hl, c.col, "unknown column %q in the Gates table (known: ID, Check, Weight, Description, Tags, Type, Pillar, Timeout, Pass When)", c.text)
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
	for _, l := range lines[i+2:] {
		if l.fenced || strings.TrimSpace(l.text) == "" || !strings.Contains(l.text, "|") {
			break
		}
		g := Goal{Line: l.n, Type: "health", Timeout: DefaultTimeout}
		row := splitRow(l.text)
		if len(row) > len(cols) {
			p.add(l.n, row[len(cols)].col, "the row has %d cells, the table's header %d", len(row), len(cols))
		}
		idCol := 1
		for j, key := range cols {
			if j >= len(row) {
				if key == "id" || key == "check" || key == "weight" {
					p.add(l.n, len(l.text)+1, "the row has no %s cell", key)
				}
				continue
			}
			c := row[j]
			v := codeSpan(c.text)
			switch key {
			case "id":
				g.ID, idCol = v, c.col
				if !kebab().MatchString(v) {
					p.add(l.n, c.col, "id %q must be kebab-case (lowercase letters and digits joined by -)", v)
				}
			case "check":
				g.Check = v
				if strings.TrimSpace(v) == "" {
					p.add(l.n, c.col, "check is empty")
				}
			case "weight":
				w, err := strconv.Atoi(v)
				if err != nil || w < 1 || w > 10 {
					p.add(l.n, c.col, "weight must be a whole number from 1 to 10, not %q", v)
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
						p.add(l.n, c.col, "type %q must be health, architecture, quality or meta", v)
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
						p.add(l.n, c.col, "timeout must be a duration such as 90s or 5m, or a number of seconds, up to %v", maxTimeout)
					}
					g.Timeout = d
				}
			case "pass_when":
				if v != "" {
					pw, err := ParsePassWhen(v)
					if err != nil {
						p.add(l.n, c.col, "pass_when %q: %v", v, err)
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
		if g.ID != "" {
			if first, dup := seen[g.ID]; dup {
				p.add(l.n, idCol, "goal id %q is also used at line %d", g.ID, first)
			} else {
				seen[g.ID] = l.n
			}
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		p.add(hl, 1, "the Gates table has no rows: no goals to measure")
	}
	return out
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
