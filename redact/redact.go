// Package redact removes secrets from text git-evolve keeps or prints: an
// agent's transcript, the output and the excerpts of failed checks and gate
// commands that records and fitness snapshots store.
//
// What a secret looks like is gitleaks' default rule set, kept as the data
// it is published as (gitleaks/gitleaks.toml, with its license) and run
// here with Go's regexp: each rule's expression, its keywords, its secret
// group, its entropy threshold and its allowlists, as gitleaks applies
// them to a file whose path it does not know. A few shapes the rule set
// lacks are ours (shapes.go), each for a reason written beside it.
//
// A rule runs only near its keywords: one pass over the text finds every
// keyword of every rule (keywords.go). Most rules are then tried from each
// keyword on, which fails within a few bytes where no secret is, and run
// whole only around the keywords where that matched (anchor.go); the
// others read the lines where their keywords are (with the few lines after
// them when the expression can match a line end). Nothing reads the whole
// text with an expression but the private key blocks' rules, whose matches
// have no bound. Rules are compiled the first time a text needs them.
//
// What this does not find: a secret of a rule whose keyword is spelled
// with a non-ASCII letter of the same case fold (a Kelvin sign for a k),
// one that spans more lines after its keyword than linesAfter, and what
// gitleaks finds only by decoding base64 or hex, which is not done here.
//
// It knows nothing of git and of the rest of git-evolve: it takes text and
// returns it with each secret replaced by Marker. It never fails: a rule
// set that cannot be read is a bug caught by its tests, and panics.
package redact

import (
	"sort"
	"strings"
	"sync"
	"unicode/utf8"
)

// Marker is what replaces a secret.
const Marker = "[REDACTED]"

// The bounds of the part of a text a rule reads around a keyword: from
// the start of its line, but at most maxBefore bytes before it, to the end
// of its line (or of the lines after it the rule may reach), but at most
// maxAfter bytes after it. No secret a rule knows is that long; a private
// key block is read whole (rule.whole).
const (
	maxBefore = 1 << 10
	maxAfter  = 16 << 10
)

var rules = sync.OnceValue(func() *ruleSet {
	rs, err := loadRules(gitleaksRules, ourRules())
	if err != nil {
		panic(err)
	}
	return rs
})

// String returns s with every secret the rules find replaced by Marker.
// Text around a secret is kept: the name it was assigned to, the header
// it was sent in.
func String(s string) string {
	if s == "" {
		return s
	}
	return with(rules(), s)
}

func with(rs *ruleSet, s string) string {
	spans := find(rs, s)
	if len(spans) == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	at := 0
	for _, sp := range spans {
		b.WriteString(s[at:sp.start])
		b.WriteString(Marker)
		at = sp.end
	}
	b.WriteString(s[at:])
	return b.String()
}

type span struct{ start, end int }

// find returns where the secrets in s are: sorted, apart, none empty.
func find(rs *ruleSet, s string) []span {
	if s == "" {
		return nil
	}
	var found []span
	w := &windows{s: s, of: map[*rule][]span{}, tried: map[*rule]int{}}
	rs.kw.scan(s, func(word, at int) {
		for _, r := range rs.byWord[word] {
			w.add(r, at)
		}
	})
	for _, r := range rs.always {
		w.of[r] = []span{{0, len(s)}}
	}
	for r, ws := range w.of {
		if r.whole {
			ws = []span{{0, len(s)}}
		} else if r.after > 0 && (r.anchor == nil || r.anchor.length < 0) {
			ws = w.widen(ws)
		}
		for _, win := range ws {
			text := s[win.start:win.end]
			for _, m := range r.re.FindAllStringSubmatchIndex(text, -1) {
				if sp, ok := secretOf(rs, r, s, win.start, m); ok {
					found = append(found, sp)
				}
			}
		}
	}
	return unmarked(s, merge(found))
}

// unmarked is spans less the markers of s: text redacted before is not
// redacted again (the marker is no secret), so that redacting is the same
// once or twice.
func unmarked(s string, spans []span) []span {
	if len(spans) == 0 || !strings.Contains(s, Marker) {
		return spans
	}
	var out []span
	for _, sp := range spans {
		at := sp.start
		// The markers that overlap the span, starting before it or ending
		// after it included.
		from := max(0, sp.start-len(Marker)+1)
		to := min(len(s), sp.end+len(Marker)-1)
		for from < to {
			i := strings.Index(s[from:to], Marker)
			if i < 0 {
				break
			}
			m := span{from + i, from + i + len(Marker)}
			if m.start >= sp.end {
				break
			}
			if m.start > at {
				out = append(out, span{at, m.start})
			}
			at = max(at, m.end)
			from = m.end
		}
		if at < sp.end {
			out = append(out, span{at, sp.end})
		}
	}
	return out
}

// secretOf is the secret of a match m of rule r in the window of s at
// base, unless the rule's entropy threshold or an allowlist lets it be.
func secretOf(rs *ruleSet, r *rule, s string, base int, m []int) (span, bool) {
	start, end := base+m[0], base+m[1]
	// As gitleaks does, a match does not start or end with a line end.
	for start < end && s[start] == '\n' {
		start++
	}
	for end > start && s[end-1] == '\n' {
		end--
	}
	match := span{start, end}
	secret := match
	if groups := len(m) / 2; groups > 1 {
		if g := r.secretGroup; g > 0 {
			if g >= groups || m[2*g] < 0 {
				return span{}, false
			}
			secret = span{base + m[2*g], base + m[2*g+1]}
		} else {
			for g := 1; g < groups; g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					secret = span{base + m[2*g], base + m[2*g+1]}
					break
				}
			}
		}
	}
	if secret.end <= secret.start {
		return span{}, false
	}
	text := s[secret.start:secret.end]
	if r.entropy != 0 && entropy(text) <= r.entropy {
		return span{}, false
	}
	matchText := s[match.start:match.end]
	line := lineOf(s, match)
	for _, a := range rs.global {
		if a.allows(text, matchText, line) {
			return span{}, false
		}
	}
	for _, a := range r.allow {
		if a.allows(text, matchText, line) {
			return span{}, false
		}
	}
	return secret, true
}

// lineOf is the whole lines of s that sp is on.
func lineOf(s string, sp span) string {
	start := strings.LastIndexByte(s[:sp.start], '\n') + 1
	end := sp.end
	if i := strings.IndexByte(s[end:], '\n'); i >= 0 {
		end += i
	} else {
		end = len(s)
	}
	return s[start:end]
}

// merge sorts spans and joins those that overlap or touch.
func merge(spans []span) []span {
	if len(spans) == 0 {
		return nil
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start < spans[j].start })
	out := spans[:1]
	for _, sp := range spans[1:] {
		last := &out[len(out)-1]
		if sp.start <= last.end {
			last.end = max(last.end, sp.end)
			continue
		}
		out = append(out, sp)
	}
	return out
}

// windows gathers, for each rule, the parts of s its expression reads:
// the lines where its keywords are, or, for a rule with an anchor, the
// bytes around each keyword where the anchor matched; joined where they
// meet.
type windows struct {
	s  string
	of map[*rule][]span
	// tried is where each rule's anchor was last tried: two keywords that
	// start at the same place try it once.
	tried map[*rule]int
	// the line of the last keyword found, which the next one is often on
	line span
}

func (w *windows) add(r *rule, at int) {
	r.compiled()
	var win span
	if a := r.anchor; a != nil {
		if last, ok := w.tried[r]; ok && last == at {
			return
		}
		w.tried[r] = at
		limit := len(w.s)
		if a.length >= 0 {
			limit = min(limit, at+a.length)
		} else {
			limit = min(limit, at+maxAfter)
		}
		if !a.tries(w.s, at) || !a.rest.MatchString(w.s[at:limit]) {
			return
		}
		// The expression reads one byte more on each side, for a \b.
		if a.before >= 0 && a.length >= 0 {
			win = span{max(0, at-a.before-1), min(len(w.s), at+a.length+1)}
		} else {
			win = w.around(at)
			if a.before >= 0 {
				win.start = max(win.start, at-a.before-1)
			}
			if a.length >= 0 {
				win.end = min(len(w.s), at+a.length+1)
			}
		}
	} else {
		win = w.around(at)
	}
	// Whole characters: a window cut inside one would let an expression
	// take a part of it.
	for win.start > 0 && !utf8.RuneStart(w.s[win.start]) {
		win.start--
	}
	for win.end < len(w.s) && !utf8.RuneStart(w.s[win.end]) {
		win.end++
	}
	ws := w.of[r]
	if n := len(ws); n > 0 && win.start <= ws[n-1].end {
		ws[n-1].start = min(ws[n-1].start, win.start)
		ws[n-1].end = max(ws[n-1].end, win.end)
		return
	}
	w.of[r] = append(ws, win)
}

// around is the line of s that at is on, but at most maxBefore bytes
// before at and maxAfter after it.
func (w *windows) around(at int) span {
	if at < w.line.start || at >= w.line.end {
		start := strings.LastIndexByte(w.s[:at], '\n') + 1
		end := strings.IndexByte(w.s[at:], '\n')
		if end < 0 {
			end = len(w.s)
		} else {
			end += at
		}
		w.line = span{start, end}
	}
	return span{max(w.line.start, at-maxBefore), min(w.line.end, at+maxAfter)}
}

// widen extends each window to the end of the linesAfter lines after it
// (at most maxAfter bytes further), joining those that then meet.
func (w *windows) widen(ws []span) []span {
	out := make([]span, 0, len(ws))
	for _, win := range ws {
		end := win.end
		limit := min(len(w.s), win.end+maxAfter)
		for n := 0; n < linesAfter && end < limit; n++ {
			i := strings.IndexByte(w.s[end+1:limit], '\n')
			if i < 0 {
				end = limit
				break
			}
			end += 1 + i
		}
		win.end = end
		if k := len(out); k > 0 && win.start <= out[k-1].end {
			out[k-1].end = max(out[k-1].end, win.end)
			continue
		}
		out = append(out, win)
	}
	return out
}
