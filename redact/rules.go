package redact

import (
	"bytes"
	_ "embed"
	"fmt"
	"math"
	"regexp"
	"regexp/syntax"
	"strings"
	"sync"

	"github.com/pelletier/go-toml/v2"
)

// gitleaksRules is the default rule set of gitleaks (its config/gitleaks.toml,
// MIT licensed: gitleaks/LICENSE), kept as it is published: updating the
// rules is copying a newer file over it (gitleaks/README.md).
//
//go:embed gitleaks/gitleaks.toml
var gitleaksRules []byte

// The rule file's shape: the part of gitleaks' configuration its default
// rules use. A field not here is an error (loadRules): a newer rule file
// that uses more of gitleaks' configuration is read by a person first.
type ruleFile struct {
	Title      string           `toml:"title"`
	MinVersion string           `toml:"minVersion"`
	Allowlist  *allowlistEntry  `toml:"allowlist"`
	Allowlists []allowlistEntry `toml:"allowlists"`
	Rules      []struct {
		ID          string           `toml:"id"`
		Description string           `toml:"description"`
		Regex       string           `toml:"regex"`
		Path        string           `toml:"path"`
		SecretGroup int              `toml:"secretGroup"`
		Entropy     float64          `toml:"entropy"`
		Keywords    []string         `toml:"keywords"`
		Tags        []string         `toml:"tags"`
		Allowlist   *allowlistEntry  `toml:"allowlist"`
		Allowlists  []allowlistEntry `toml:"allowlists"`
		SkipReport  bool             `toml:"skipReport"`
	} `toml:"rules"`
}

type allowlistEntry struct {
	Description string   `toml:"description"`
	Condition   string   `toml:"condition"`
	RegexTarget string   `toml:"regexTarget"`
	Regexes     []string `toml:"regexes"`
	StopWords   []string `toml:"stopwords"`
	Paths       []string `toml:"paths"`
	Commits     []string `toml:"commits"`
}

// A rule finds one kind of secret: where its regular expression matches
// near one of its keywords, the secret is the group secretGroup of the
// match (else its first group that matched something, else all of it),
// unless it is too regular (entropy) or an allowlist allows it.
type rule struct {
	id          string
	source      string
	secretGroup int
	entropy     float64
	keywords    []string
	allow       []*allowlist
	// whole: the expression runs over the whole text when one of its
	// keywords occurs anywhere, not only over the lines near it (a private
	// key block of any length).
	whole bool

	once sync.Once
	re   *regexp.Regexp
	// after is how many lines after a keyword's a match may reach: 0 when
	// the expression cannot match a line end.
	after int
	// anchor, when the expression has one, is tried at each keyword
	// first (anchor.go).
	anchor *anchor
}

// compiled is the rule's expression, compiled the first time a text holds
// one of its keywords: most texts need a few of the rules.
func (r *rule) compiled() *regexp.Regexp {
	r.once.Do(func() {
		r.re = regexp.MustCompile(r.source)
		if matchesNewline(r.source) {
			r.after = linesAfter
		}
		if !r.whole {
			r.anchor = anchorOf(r.source, r.keywords)
		}
		for _, a := range r.allow {
			a.compile()
		}
	})
	return r.re
}

// linesAfter is how many lines after the line of a keyword a rule whose
// expression can match a line end looks at: gitleaks' curl rules allow 5
// lines between curl and its -H or -u.
const linesAfter = 6

// matchesNewline reports whether the expression can match a line end.
func matchesNewline(expr string) bool {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpAnyChar:
			return true
		case syntax.OpLiteral:
			if strings.ContainsRune(string(re.Rune), '\n') {
				return true
			}
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
					return true
				}
			}
		}
		for _, sub := range re.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(re)
}

// An allowlist says which findings of a rule (or of all rules) are not
// secrets: those where one of its regular expressions matches the target
// (the secret, the whole match or its line), or whose secret holds one of
// its stop words; with condition AND, both.
type allowlist struct {
	target    string // "secret", "match" or "line"
	and       bool
	never     bool // AND with paths or commits, which a text does not have
	sources   []string
	re        *regexp.Regexp
	stopWords []string // lower case
}

func newAllowlist(e allowlistEntry) (*allowlist, error) {
	a := &allowlist{target: "secret", sources: e.Regexes}
	switch strings.ToUpper(e.Condition) {
	case "AND", "&&":
		a.and = true
		a.never = len(e.Paths) > 0 || len(e.Commits) > 0
	case "", "OR", "||":
	default:
		return nil, fmt.Errorf("unknown allowlist condition %q", e.Condition)
	}
	switch e.RegexTarget {
	case "", "secret":
	case "match", "line":
		a.target = e.RegexTarget
	default:
		return nil, fmt.Errorf("unknown allowlist regexTarget %q", e.RegexTarget)
	}
	for _, w := range e.StopWords {
		a.stopWords = append(a.stopWords, strings.ToLower(w))
	}
	return a, nil
}

func (a *allowlist) compile() {
	if len(a.sources) > 0 && a.re == nil {
		a.re = regexp.MustCompile("(?:" + strings.Join(a.sources, ")|(?:") + ")")
	}
}

// allows reports whether the allowlist allows a finding.
func (a *allowlist) allows(secret, match, line string) bool {
	if a.never {
		return false
	}
	target := secret
	switch a.target {
	case "match":
		target = match
	case "line":
		target = line
	}
	byRegex := a.re != nil && target != "" && a.re.MatchString(target)
	byWord := false
	if len(a.stopWords) > 0 && secret != "" {
		s := strings.ToLower(secret)
		for _, w := range a.stopWords {
			if strings.Contains(s, w) {
				byWord = true
				break
			}
		}
	}
	if a.and {
		return (a.re == nil || byRegex) && (len(a.stopWords) == 0 || byWord) && (a.re != nil || len(a.stopWords) > 0)
	}
	return byRegex || byWord
}

// A ruleSet is every rule, the allowlists that apply to all of them and
// the automaton of their keywords.
type ruleSet struct {
	rules  []*rule
	global []*allowlist
	kw     *keywords
	// byWord lists, for each keyword, the rules it wakes.
	byWord [][]*rule
	// always lists the rules without keywords, which run over every text.
	always []*rule
}

// loadRules reads gitleaks' rules and adds ours. Rules that apply to
// files by their path are left out: a transcript has no path.
func loadRules(data []byte, ours []*rule) (*ruleSet, error) {
	var f ruleFile
	if err := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields().Decode(&f); err != nil {
		return nil, fmt.Errorf("gitleaks rules: %w", err)
	}
	rs := &ruleSet{}
	var globals []allowlistEntry
	if f.Allowlist != nil {
		globals = append(globals, *f.Allowlist)
	}
	globals = append(globals, f.Allowlists...)
	for _, e := range globals {
		// The global allowlist's paths are files not to scan; only its
		// expressions and stop words apply to text.
		e.Paths, e.Commits = nil, nil
		a, err := newAllowlist(e)
		if err != nil {
			return nil, fmt.Errorf("gitleaks rules: global allowlist: %w", err)
		}
		a.compile()
		rs.global = append(rs.global, a)
	}
	for _, fr := range f.Rules {
		if fr.Regex == "" || fr.Path != "" || fr.SkipReport {
			continue
		}
		r := &rule{id: fr.ID, source: fr.Regex, secretGroup: fr.SecretGroup, entropy: fr.Entropy, keywords: fr.Keywords}
		entries := fr.Allowlists
		if fr.Allowlist != nil {
			entries = append(entries, *fr.Allowlist)
		}
		for _, e := range entries {
			a, err := newAllowlist(e)
			if err != nil {
				return nil, fmt.Errorf("gitleaks rules: %s: %w", fr.ID, err)
			}
			r.allow = append(r.allow, a)
		}
		rs.rules = append(rs.rules, r)
	}
	rs.rules = append(rs.rules, ours...)
	index := map[string]int{}
	var words []string
	for _, r := range rs.rules {
		if len(r.keywords) == 0 {
			rs.always = append(rs.always, r)
			continue
		}
		for _, w := range r.keywords {
			w = strings.ToLower(w)
			if w == "" {
				continue
			}
			i, ok := index[w]
			if !ok {
				i = len(words)
				index[w] = i
				words = append(words, w)
				rs.byWord = append(rs.byWord, nil)
			}
			rs.byWord[i] = append(rs.byWord[i], r)
		}
	}
	rs.kw = newKeywords(words)
	return rs, nil
}

// entropy is the Shannon entropy of s in bits per character, as gitleaks
// computes it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	counts := map[rune]int{}
	for _, c := range s {
		counts[c]++
	}
	var e float64
	inv := 1 / float64(len(s))
	for _, n := range counts {
		f := float64(n) * inv
		e -= f * math.Log2(f)
	}
	return e
}
