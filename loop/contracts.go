package loop

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gate"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
)

// The repository's own contracts for its loop (seeds 003 and 004): the
// execution profile, and the program (PROGRAM.md, else its alias
// AUTODEV.md), at the top of the working tree.
const (
	ProfileFile = "docs/contracts/repo-execution-profile.md"
	ProgramFile = "PROGRAM.md"
	AutodevFile = "AUTODEV.md"
)

// Contract is what a repository's contract file says, field by field (the
// seeds' names). Its text is the repository's, untrusted: each item is
// bounded, cleaned of control characters, and at most maxContractItems a
// field.
type Contract struct {
	Path               string   `json:"path"`
	StartupReads       []string `json:"startup_reads,omitempty"`
	ValidationCommands []string `json:"validation_commands,omitempty"`
	TrackerCommands    []string `json:"tracker_commands,omitempty"`
	DefinitionOfDone   []string `json:"definition_of_done,omitempty"`
	MutableScope       []string `json:"mutable_scope,omitempty"`
	DecisionPolicy     []string `json:"decision_policy,omitempty"`
	StopConditions     []string `json:"stop_conditions,omitempty"`
}

// Bounds of what a contract file gives.
const (
	maxContractFile  = 256 << 10
	maxContractItems = 50
	maxContractItem  = 500
)

// ProfileRequired are the fields seed 004 requires of an execution profile.
var ProfileRequired = []string{"startup_reads", "validation_commands", "definition_of_done"}

func (c *Contract) field(name string) *[]string {
	switch name {
	case "startup_reads":
		return &c.StartupReads
	case "validation_commands":
		return &c.ValidationCommands
	case "tracker_commands":
		return &c.TrackerCommands
	case "definition_of_done":
		return &c.DefinitionOfDone
	case "mutable_scope":
		return &c.MutableScope
	case "decision_policy":
		return &c.DecisionPolicy
	case "stop_conditions":
		return &c.StopConditions
	}
	return nil
}

// Missing are the names of the fields of want the contract gives nothing.
func (c *Contract) Missing(want []string) []string {
	var out []string
	for _, f := range want {
		if p := c.field(f); p != nil && len(*p) == 0 {
			out = append(out, f)
		}
	}
	return out
}

var (
	contractHeading = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`) })
	contractKey     = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("^\\s*(?:[-*]\\s+)?[*_`]*([A-Za-z][A-Za-z _-]*?)[*_`]*\\s*:\\s*(.*)$")
	})
	contractItem = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^\s*(?:[-*+]|[0-9]+[.)])\s+(.*)$`) })
	codeSpan     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("`([^`]+)`") })
)

// fieldName is a heading's or a key's text as a field name
// ("Startup reads", "startup-reads" → startup_reads).
func fieldName(s string) string {
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), "*_`"))
	return strings.NewReplacer(" ", "_", "-", "_").Replace(s)
}

// ParseContract reads a contract file's fields, leniently, as such files
// are written: a field is a heading (`## startup_reads`) or a key
// (`startup_reads:`, as in YAML front matter or a fenced YAML block; a
// value on the key's line is one item, `[a, b]` several), and its items
// are the list items that follow (`- x`, `1. x`; a code span in one is
// the item). Anything else ends the field. Fields it does not know are
// left out.
func ParseContract(p string, data []byte) Contract {
	if len(data) > maxContractFile {
		data = data[:maxContractFile]
	}
	c := Contract{Path: p}
	var cur *[]string
	add := func(item string) {
		if cur == nil || len(*cur) >= maxContractItems {
			return
		}
		if m := codeSpan().FindStringSubmatch(item); m != nil {
			item = m[1]
		}
		item = strings.TrimSpace(strings.Trim(strings.TrimSpace(item), `"'`))
		item = goals.CleanText(item)
		if len(item) > maxContractItem {
			i := maxContractItem
			for i > 0 && !utf8.RuneStart(item[i]) {
				i--
			}
			item = item[:i]
		}
		if item != "" && !slices.Contains(*cur, item) {
			*cur = append(*cur, item)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "```") || strings.TrimSpace(line) == "---" {
			continue
		}
		if m := contractHeading().FindStringSubmatch(line); m != nil {
			cur = c.field(fieldName(m[1]))
			continue
		}
		if m := contractKey().FindStringSubmatch(line); m != nil {
			if f := c.field(fieldName(m[1])); f != nil {
				cur = f
				v := strings.TrimSpace(m[2])
				if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
					for _, x := range strings.Split(strings.Trim(v, "[]"), ",") {
						add(x)
					}
				} else if v != "" && v != "|" && v != ">" {
					add(v)
				}
				continue
			}
		}
		if m := contractItem().FindStringSubmatch(line); m != nil {
			add(m[1])
			continue
		}
		if !strings.HasPrefix(line, " ") && !strings.HasPrefix(line, "\t") {
			cur = nil // prose: the field's list ended
		}
	}
	return c
}

// readContractFile reads at most maxContractFile bytes of a regular file
// under top (a link is not followed out of the tree).
func readContractFile(top, rel string) ([]byte, bool) {
	fi, err := os.Lstat(filepath.Join(top, filepath.FromSlash(rel)))
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	f, err := os.Open(filepath.Join(top, filepath.FromSlash(rel)))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxContractFile))
	return data, err == nil
}

// ReadContracts reads the repository's contracts in the working tree at
// top: the execution profile, then the program (PROGRAM.md wins over
// AUTODEV.md). Files that are not there are left out.
func ReadContracts(top string) []Contract {
	var out []Contract
	if data, ok := readContractFile(top, ProfileFile); ok {
		out = append(out, ParseContract(ProfileFile, data))
	}
	for _, p := range []string{ProgramFile, AutodevFile} {
		if data, ok := readContractFile(top, p); ok {
			out = append(out, ParseContract(p, data))
			break
		}
	}
	return out
}

// programAt reads the program contract (PROGRAM.md, else AUTODEV.md) as
// commit holds it (nil when it has none).
func programAt(repo *gitstore.Repo, commit gitstore.Hash) (*Contract, error) {
	for _, p := range []string{ProgramFile, AutodevFile} {
		blob, ok, err := repo.TreeFile(commit, p)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		data, err := repo.ReadBlob(blob)
		if err != nil {
			return nil, err
		}
		c := ParseContract(p, data)
		return &c, nil
	}
	return nil, nil
}

// inScope reports whether the path p is within one of the scope's
// entries: a path or a directory (its files), or a glob (`*`, `?`, `[…]`
// within a name; `**` any depth). Entries with spaces are prose, not
// paths, and scope nothing.
func inScope(scope []string, p string) bool {
	for _, s := range scope {
		s = strings.TrimPrefix(strings.TrimSpace(s), "./")
		switch {
		case s == "" || strings.ContainsAny(s, " \t"):
			continue
		case s == "." || s == "*" || s == "**" || s == "/":
			return true
		case strings.HasSuffix(s, "/**") || strings.HasSuffix(s, "/"):
			dir := strings.TrimSuffix(strings.TrimSuffix(s, "**"), "/")
			if globPrefix(dir, p) {
				return true
			}
		case strings.Contains(s, "**"):
			pre, post, _ := strings.Cut(s, "**")
			pre = strings.TrimSuffix(pre, "/")
			post = strings.TrimPrefix(post, "/")
			if pre != "" && !globPrefix(pre, p) {
				continue
			}
			rest := p
			if pre != "" {
				rest = strings.TrimPrefix(p[len(pre):], "/")
			}
			for parts := strings.Split(rest, "/"); len(parts) > 0; parts = parts[1:] {
				if ok, _ := path.Match(post, strings.Join(parts, "/")); ok {
					return true
				}
			}
		default:
			if ok, _ := path.Match(s, p); ok || globPrefix(s, p) {
				return true
			}
		}
	}
	return false
}

// globPrefix reports whether p is dir or under it (dir may hold a glob
// within its names).
func globPrefix(dir, p string) bool {
	n := strings.Count(dir, "/") + 1
	parts := strings.Split(p, "/")
	if len(parts) < n {
		return false
	}
	ok, _ := path.Match(dir, strings.Join(parts[:n], "/"))
	return ok
}

// RequireScope is the program contract's rule for
// cycle.FinishOptions.Require: a cycle changes only files within the
// mutable_scope of the PROGRAM.md (or AUTODEV.md) its start commit holds
// (the cycle cannot widen its own scope), besides the loop's own files
// under .agents/. A change outside it fails the gate, naming the files.
// A program with no scope (or none) scopes nothing.
func RequireScope(repo *gitstore.Repo) func(c *cycle.OpenCycle, changed []string) []gate.Failure {
	return func(c *cycle.OpenCycle, changed []string) []gate.Failure {
		start, err := gitstore.ParseHash(c.Start)
		if err != nil {
			return nil
		}
		prog, err := programAt(repo, start)
		if err != nil || prog == nil || len(prog.MutableScope) == 0 {
			return nil
		}
		var out []string
		for _, p := range changed {
			if strings.HasPrefix(p, ".agents/") || inScope(prog.MutableScope, p) {
				continue
			}
			out = append(out, p)
		}
		if len(out) == 0 {
			return nil
		}
		shown := out
		if len(shown) > 10 {
			shown = shown[:10]
		}
		list := strings.Join(shown, ", ")
		if len(out) > len(shown) {
			list += ", …"
		}
		return []gate.Failure{{What: "scope", Name: "outside " + prog.Path + "'s mutable_scope", Status: goals.Fail,
			Reason: "the cycle changed " + goals.CleanText(list) + ", outside the mutable_scope of " + prog.Path + " as the cycle started (" + goals.CleanText(strings.Join(prog.MutableScope, ", ")) +
				"); the scope is the operator's: widen it in " + prog.Path + " (a commit of its own) to let cycles change them"}}
	}
}

// Requirements are the rules of the repository's contracts and of the
// seeds that a cycle's work must meet beside its gate: seed 001's
// hypothesis for an edit of the skill, and the program's mutable scope.
func Requirements(repo *gitstore.Repo) func(c *cycle.OpenCycle, changed []string) []gate.Failure {
	hyp, scope := RequireHypothesis(repo), RequireScope(repo)
	return func(c *cycle.OpenCycle, changed []string) []gate.Failure {
		return append(hyp(c, changed), scope(c, changed)...)
	}
}
