// Package goals is the ruler of evolve cycles: the goals file, GOALS.yaml or
// GOALS.md with its directives (read with every problem located by line and
// column), running its checks (shell commands: exit 0 pass, 77 skip, 126 or
// 127 error, past the time limit timeout, anything else fail; in parallel
// where that is safe), the value of a continuous goal (from its check's
// output, or from a file the check wrote in this run), the excerpt of a
// check's output a person or the next agent reads (what a result keeps of
// an output has its secrets redacted), the fitness snapshot they give, and
// the local trust that must be given to a goals file before its commands
// run.
//
// It knows nothing of git: callers hand it a file and a directory.
package goals

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"
)

// FileName is the goals file at the root of a repository.
const FileName = "GOALS.yaml"

// File is a goals file.
type File struct {
	Path    string
	Version int
	Mission string
	Goals   []Goal
	Gate    Gate
	// NonSubstantive are paths whose changes do not count as a cycle's
	// work, beside .agents/**, GOALS.yaml and GOALS.md: "dir/**" for a
	// directory, or a path.Match pattern.
	NonSubstantive []string
	// Ruler are more paths that judge a cycle (its scripts, fixtures, golden
	// files) beside the goals file, the files the gate and the checks
	// name, and the tests and test configuration every ecosystem's
	// conventions name: "dir/**", a path.Match pattern, or a pattern with
	// ** for any number of directories ("tools/**/check.sh"). The judge
	// holds them as they were when a cycle started.
	Ruler []string
	// Era names the file's content: "goals-" and the first 12 hex digits of
	// its SHA-256. Baselines are kept per era.
	Era string
	// Warnings are keys this schema does not know: the existing tools read
	// such files, so they are not errors, but often they are typos.
	Warnings Problems
	// Vision, Tagline, Pillars, NorthStars and AntiStars are keys the
	// goals files of the evolve-loop ecosystem carry: read and kept (as
	// YAML gives them), not used to measure.
	Vision, Tagline                string
	Pillars, NorthStars, AntiStars any
	// Directives are GOALS.md's numbered directives (none in GOALS.yaml).
	Directives []Directive
	// Markdown says the file is a GOALS.md.
	Markdown bool
	// LeftOut are the entries of a GOALS.md that cannot be read (a row of
	// its Gates table, a directive), each with where it is and why: they
	// are left out and the rest is measured. They are errors, not
	// warnings: goals validate fails on them; the other commands say so
	// and go on with the rest. A file none of whose rows can be read is
	// refused. Always empty for GOALS.yaml.
	LeftOut Problems
}

// Goal is one fitness goal.
type Goal struct {
	ID          string
	Description string
	Check       string
	Weight      int
	Type        string // health (default), architecture, quality, meta
	Pillar      string
	Tags        []string
	Continuous  *Continuous
	Timeout     time.Duration
	Line        int
	// Added, Owner and Notes are the ecosystem's bookkeeping of a goal:
	// kept, not used to measure.
	Added, Owner, Notes string
	// PassWhen, when set, decides whether the check passed, from its exit
	// code and its output (see PassWhen).
	PassWhen *PassWhen
	// HoldoutFor, in a holdout check, is the goal it holds out for: when a
	// cycle makes that goal pass, this check must pass too (an answer fitted
	// to the goal's check alone does not).
	HoldoutFor string
}

// Continuous is a goal measured as a number.
type Continuous struct {
	Metric    string
	Threshold float64
	Direction string  // higher (default) or lower: which way is better
	Tolerance float64 // how far the value may move the wrong way before it counts as a regression
	// Value finds the number in the check's output (or in ValueFile): a
	// regular expression whose first group (or whole match) is the number.
	// Without it, the last number in the output is taken (in ValueFile, see
	// FileValue).
	Value *regexp.Regexp
	// ValueFile, when set, is a file the check writes, relative to where
	// it runs (cleaned, with slashes; it does not leave that directory):
	// the value is read from it after the check ran, not from the check's
	// output, and only when the check wrote it.
	ValueFile string
}

// Gate is the project's own test commands, run before the goals when a
// cycle finishes.
type Gate struct {
	Commands []string
	Timeout  time.Duration
	// Set says the file names the gate's commands (gate: [] runs none);
	// without them (no gate key, or one with only a timeout), the gate runs
	// the test command detected from the tree, within Timeout.
	Set bool
}

// DefaultGateTimeout is the gate's time limit when the file sets none.
const DefaultGateTimeout = 30 * time.Minute

// maxTimeout bounds a check's or the gate's time limit.
const maxTimeout = 24 * time.Hour

// DefaultTimeout is a check's time limit when the goal sets none.
const DefaultTimeout = 2 * time.Minute

// Problem is something wrong in a goals file, with where it is.
type Problem struct {
	Path      string
	Line, Col int
	Msg       string
	Warning   bool // a key the schema does not know: reported, not an error
	// AsWritten, in a warning, says the text warned about is still read,
	// as written (a check cell that is not a code span); the other
	// warnings are about text that is ignored.
	AsWritten bool
}

// Suffix is what follows a warning printed for a person: what becomes of
// the text it is about.
func (p Problem) Suffix() string {
	if p.AsWritten {
		return ""
	}
	return " (ignored)"
}

func (p Problem) Error() string {
	if p.Line == 0 {
		return fmt.Sprintf("%s: %s", p.Path, p.Msg)
	}
	return fmt.Sprintf("%s:%d:%d: %s", p.Path, p.Line, p.Col, p.Msg)
}

// Problems is every problem found in a goals file (warnings included, after
// the errors, when the file also has errors).
type Problems []Problem

// Errors counts the problems that are not warnings.
func (ps Problems) Errors() int {
	n := 0
	for _, p := range ps {
		if !p.Warning {
			n++
		}
	}
	return n
}

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "\n")
}

var kebab = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`) })

// Load reads and checks a goals file. It returns the file and nil, or the
// Problems found (all of them, each with its line and column), or an error
// when the file cannot be read (errors.Is(err, fs.ErrNotExist) when there
// is none).
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(filepath.Base(path), data)
}

// Parse checks the content of a goals file named name: GOALS.md (a name
// ending in .md) as Markdown, any other as YAML.
func Parse(name string, data []byte) (*File, error) { return ParseAs(name, name, data) }

// ParseAs checks the content of the goals file file (GOALS.yaml or
// GOALS.md: its name decides how it is read), naming it display in the
// problems it finds.
func ParseAs(file, display string, data []byte) (*File, error) {
	name := display
	f := &File{Path: name, Era: "goals-" + DigestOf(file, data)[:12]}
	if IsMarkdown(file) {
		return parseMarkdown(name, data, f)
	}
	p := &parser{found{name: name}}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, Problems{p.syntax(err)}
	}
	if len(doc.Content) == 0 {
		return nil, Problems{{Path: name, Msg: "the file is empty: no goals to measure"}}
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, Problems{p.at(root, "the file must be a mapping with version and goals")}
	}
	var goalsNode *yaml.Node
	p.fields(root, func(key, val *yaml.Node) {
		switch key.Value {
		case "version":
			f.Version = p.integer(val, 1, 3, "version")
		case "mission":
			f.Mission = p.str(val, "mission")
		case "goals":
			goalsNode = val
		case "gate":
			f.Gate = p.gate(val)
		case "non_substantive":
			if val.Kind != yaml.SequenceNode {
				p.add(val, "non_substantive must be a list")
				break
			}
			for _, c := range val.Content {
				pat := p.str(c, "non_substantive entries")
				if pat == "" {
					continue
				}
				if _, err := path.Match(strings.TrimSuffix(pat, "/**"), ""); err != nil {
					p.add(c, "non_substantive pattern %q: %v", pat, err)
					continue
				}
				f.NonSubstantive = append(f.NonSubstantive, pat)
			}
		case "ruler":
			if val.Kind != yaml.SequenceNode {
				p.add(val, "ruler must be a list")
				break
			}
			for _, c := range val.Content {
				pat := p.str(c, "ruler entries")
				if err := checkGlob(pat); err != nil {
					p.add(c, "ruler pattern %q: %v", pat, err)
					continue
				}
				f.Ruler = append(f.Ruler, pat)
			}
		case "vision":
			f.Vision = p.scalar(val, "vision")
		case "tagline":
			f.Tagline = p.scalar(val, "tagline")
		case "pillars":
			f.Pillars = p.kept(val)
		case "north_stars":
			f.NorthStars = p.kept(val)
		case "anti_stars":
			f.AntiStars = p.kept(val)
		default:
			p.warn(key, "unknown key %q (known: version, mission, goals, gate, non_substantive, ruler, vision, tagline, pillars, north_stars, anti_stars)", key.Value)
		}
	})
	if f.Version == 0 && !p.has(root, "version") {
		p.add(root, "version is missing (1, 2 or 3)")
	}
	switch {
	case goalsNode == nil:
		p.add(root, "goals is missing: no goals to measure")
	case goalsNode.Kind != yaml.SequenceNode:
		p.add(goalsNode, "goals must be a list")
	case len(goalsNode.Content) == 0:
		p.add(goalsNode, "goals is empty: no goals to measure")
	default:
		seen := map[string]*yaml.Node{}
		for _, g := range goalsNode.Content {
			goal, idNode := p.goal(g)
			if goal.ID != "" {
				if first, dup := seen[goal.ID]; dup {
					p.add(idNode, "goal id %q is also used at line %d", goal.ID, first.Line)
				} else {
					seen[goal.ID] = idNode
				}
			}
			f.Goals = append(f.Goals, goal)
		}
	}
	return p.result(f)
}

type parser struct{ found }

// found collects what a reader of a goals file finds wrong: the errors, and
// the warnings (keys or columns it does not know).
type found struct {
	name     string
	problems Problems
	warnings Problems
}

// result is the file read, or every problem found, the warnings after the
// errors.
func (p *found) result(f *File) (*File, error) {
	if len(p.problems) > 0 {
		for _, w := range p.warnings {
			w.Warning = true
			p.problems = append(p.problems, w)
		}
		return nil, p.problems
	}
	f.Warnings = p.warnings
	return f, nil
}

func (p *parser) warn(n *yaml.Node, format string, args ...any) {
	w := p.at(n, format, args...)
	w.Warning = true
	p.warnings = append(p.warnings, w)
}

func (p *parser) at(n *yaml.Node, format string, args ...any) Problem {
	return Problem{Path: p.name, Line: n.Line, Col: n.Column, Msg: fmt.Sprintf(format, args...)}
}

func (p *parser) add(n *yaml.Node, format string, args ...any) {
	p.problems = append(p.problems, p.at(n, format, args...))
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^yaml: line (\d+): (.*)$`) })

func (p *parser) syntax(err error) Problem {
	msg := err.Error()
	if m := yamlLine().FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Problem{Path: p.name, Line: line, Col: 1, Msg: m[2]}
	}
	return Problem{Path: p.name, Msg: strings.TrimPrefix(msg, "yaml: ")}
}

// fields calls fn with each key and value of a mapping.
func (p *parser) fields(n *yaml.Node, fn func(key, val *yaml.Node)) {
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := n.Content[i], n.Content[i+1]
		if seen[key.Value] {
			p.add(key, "%q is given twice", key.Value)
			continue
		}
		seen[key.Value] = true
		fn(key, val)
	}
}

func (p *parser) has(n *yaml.Node, key string) bool {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return true
		}
	}
	return false
}

func (p *parser) str(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" && n.Tag != "!!int" && n.Tag != "!!float" && n.Tag != "!!bool" {
		p.add(n, "%s must be text", what)
		return ""
	}
	return n.Value
}

func (p *parser) integer(n *yaml.Node, lo, hi int, what string) int {
	v, err := strconv.Atoi(n.Value)
	if n.Kind != yaml.ScalarNode || n.Tag != "!!int" || err != nil {
		p.add(n, "%s must be a whole number from %d to %d", what, lo, hi)
		return 0
	}
	if v < lo || v > hi {
		p.add(n, "%s must be from %d to %d, not %d", what, lo, hi, v)
		return 0
	}
	return v
}

func (p *parser) number(n *yaml.Node, what string) (float64, bool) {
	v, err := strconv.ParseFloat(n.Value, 64)
	if n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!float") || err != nil {
		p.add(n, "%s must be a number", what)
		return 0, false
	}
	return v, true
}

// scalar reads a value kept as written: text, a number, a date.
func (p *parser) scalar(n *yaml.Node, what string) string {
	if n.Kind != yaml.ScalarNode {
		p.add(n, "%s must be a single value", what)
		return ""
	}
	return n.Value
}

// kept decodes a value the file carries for its readers, whatever its shape.
func (p *parser) kept(n *yaml.Node) any {
	var v any
	if err := n.Decode(&v); err != nil {
		p.add(n, "%v", err)
	}
	return v
}

// duration reads "90s", "2m", or a number of seconds.
func (p *parser) duration(n *yaml.Node, what string) time.Duration {
	if n.Kind == yaml.ScalarNode {
		if secs, err := strconv.ParseFloat(n.Value, 64); err == nil && secs > 0 && secs <= maxTimeout.Seconds() {
			return time.Duration(secs * float64(time.Second))
		}
		if d, err := time.ParseDuration(n.Value); err == nil && d > 0 && d <= maxTimeout {
			return d
		}
	}
	p.add(n, "%s must be a duration such as 90s or 5m, or a number of seconds, up to %v", what, maxTimeout)
	return 0
}

func (p *parser) strings(n *yaml.Node, what string) []string {
	if n.Kind != yaml.SequenceNode {
		p.add(n, "%s must be a list", what)
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if s := p.str(c, what+" entries"); s != "" {
			out = append(out, s)
		}
	}
	return out
}

var goalTypes = map[string]bool{"health": true, "architecture": true, "quality": true, "meta": true}

func (p *parser) goal(n *yaml.Node) (Goal, *yaml.Node) {
	g := Goal{Line: n.Line, Type: "health", Timeout: DefaultTimeout}
	idNode := n
	if n.Kind != yaml.MappingNode {
		p.add(n, "a goal must be a mapping (id, description, check, weight, …)")
		return g, idNode
	}
	p.fields(n, func(key, val *yaml.Node) {
		switch key.Value {
		case "id":
			idNode = val
			if g.ID = p.str(val, "id"); g.ID != "" && !kebab().MatchString(g.ID) {
				p.add(val, "id %q must be kebab-case (lowercase letters and digits joined by -)", g.ID)
			}
		case "description":
			g.Description = p.str(val, "description")
		case "check":
			g.Check = p.str(val, "check")
		case "weight":
			g.Weight = p.integer(val, 1, 10, "weight")
		case "type":
			if g.Type = p.str(val, "type"); !goalTypes[g.Type] {
				p.add(val, "type %q must be health, architecture, quality or meta", g.Type)
			}
		case "pillar":
			g.Pillar = p.str(val, "pillar")
		case "tags":
			g.Tags = p.strings(val, "tags")
		case "timeout":
			g.Timeout = p.duration(val, "timeout")
		case "continuous":
			g.Continuous = p.continuous(val)
		case "pass_when":
			if src := p.str(val, "pass_when"); src != "" {
				pw, err := ParsePassWhen(src)
				if err != nil {
					p.add(val, "pass_when %q: %v", src, err)
				}
				g.PassWhen = pw
			}
		case "added":
			g.Added = p.scalar(val, "added")
		case "owner":
			g.Owner = p.scalar(val, "owner")
		case "notes":
			g.Notes = p.scalar(val, "notes")
		case "holdout_for":
			g.HoldoutFor = p.str(val, "holdout_for")
		default:
			p.warn(key, "unknown goal key %q", key.Value)
		}
	})
	for _, req := range []struct {
		key string
		ok  bool
	}{{"id", g.ID != ""}, {"description", g.Description != ""}, {"check", strings.TrimSpace(g.Check) != ""}, {"weight", g.Weight != 0}} {
		if !req.ok && !p.has(n, req.key) {
			p.add(n, "goal %s is missing (required)", req.key)
		} else if !req.ok && (req.key == "description" || req.key == "check") {
			p.add(n, "goal %s is empty", req.key)
		}
	}
	return g, idNode
}

func (p *parser) continuous(n *yaml.Node) *Continuous {
	c := &Continuous{Direction: "higher"}
	if n.Kind != yaml.MappingNode {
		p.add(n, "continuous must be a mapping (metric, threshold, …)")
		return nil
	}
	haveThreshold := false
	p.fields(n, func(key, val *yaml.Node) {
		switch key.Value {
		case "metric":
			c.Metric = p.str(val, "metric")
		case "threshold":
			c.Threshold, haveThreshold = p.number(val, "threshold")
		case "direction":
			if c.Direction = p.str(val, "direction"); c.Direction != "higher" && c.Direction != "lower" {
				p.add(val, "direction %q must be higher or lower (which way is better)", c.Direction)
			}
		case "tolerance":
			if t, ok := p.number(val, "tolerance"); ok && t < 0 {
				p.add(val, "tolerance must not be negative")
			} else {
				c.Tolerance = t
			}
		case "value":
			re, err := regexp.Compile(p.str(val, "value"))
			if err != nil {
				p.add(val, "value is not a regular expression: %v", err)
			} else {
				c.Value = re
			}
		case "value_file":
			switch name := p.str(val, "value_file"); {
			case name == "" && val.Tag == "!!str":
				p.add(val, "value_file is empty")
			case name != "":
				if clean, err := valueFilePath(name); err != nil {
					p.add(val, "value_file %q %v", name, err)
				} else {
					c.ValueFile = clean
				}
			}
		default:
			p.warn(key, "unknown continuous key %q (known: metric, threshold, direction, tolerance, value, value_file)", key.Value)
		}
	})
	if c.Metric == "" && !p.has(n, "metric") {
		p.add(n, "continuous metric is missing")
	}
	if !haveThreshold && !p.has(n, "threshold") {
		p.add(n, "continuous threshold is missing")
	}
	return c
}

func (p *parser) gate(n *yaml.Node) Gate {
	g := Gate{Timeout: DefaultGateTimeout, Set: true}
	switch {
	case n.Kind == yaml.ScalarNode && n.Tag != "!!null":
		if s := p.str(n, "gate"); strings.TrimSpace(s) != "" {
			g.Commands = []string{s}
		} else if n.Tag == "!!str" {
			p.add(n, "gate is empty (gate: [] runs no command)")
		}
		return g
	case n.Kind == yaml.SequenceNode:
		g.Commands = p.strings(n, "gate")
		return g
	case n.Kind == yaml.MappingNode:
		// Without commands, the mapping sets the timeout of the gate
		// detected from the tree.
		g.Set = p.has(n, "commands")
		p.fields(n, func(key, val *yaml.Node) {
			switch key.Value {
			case "commands":
				g.Commands = p.strings(val, "gate commands")
			case "timeout":
				g.Timeout = p.duration(val, "gate timeout")
			default:
				p.warn(key, "unknown gate key %q (known: commands, timeout)", key.Value)
			}
		})
		return g
	}
	p.add(n, "gate must be a command, a list of commands (gate: [] for none), or a mapping with commands and timeout")
	return g
}

// checkGlob says what is wrong with a path pattern of the ruler key: each
// segment must be a path.Match pattern or **, and the whole a relative
// path.
func checkGlob(pat string) error {
	if pat == "" || strings.HasPrefix(pat, "/") || strings.Contains(pat, "\\") {
		return errors.New("a pattern is a relative path with slashes")
	}
	for _, seg := range strings.Split(pat, "/") {
		if seg == ".." {
			return errors.New("a pattern names paths inside the repository (no ..)")
		}
		if seg == "**" {
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return err
		}
	}
	return nil
}
