package redact

import (
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// An anchor lets a rule be tried where each of its keywords starts,
// instead of along whole lines: most of gitleaks' rules are an optional
// run of name characters, then one of their keywords, then what must
// follow it (`[\w.-]{0,50}?(?:key|token|…)[ \t\w.-]{0,20}…=…(value)`).
// Run along a line, Go's regexp carries a thread for each of the fifty
// positions the name may start at through every byte: about 3 µs a byte
// for gitleaks' generic rule. Tried at a keyword, the part from the
// keyword on fails within a few bytes where nothing is assigned, and the
// whole expression runs only where it did not fail.
//
// An expression has an anchor when, once its leading parts that may match
// nothing are set aside, every match of the rest starts with one of the
// rule's keywords (in ASCII letters of either case): then every match of
// the expression has a keyword where the rest starts, and trying the rest
// at each keyword finds it.
type anchor struct {
	rest *regexp.Regexp // ^(?:the rest)
	// before is the most bytes the parts set aside match, length the most
	// the rest does; -1 when there is no bound.
	before, length int
	// need, when set, is a byte one of which must be in the text from
	// needFrom to needTo bytes after the keyword for the rest to match:
	// the first of the first part after the keyword that cannot match
	// nothing (an assignment's = or :). Looking for it is cheaper than
	// trying the rest, which most keywords fail.
	need             *[256]bool
	needFrom, needTo int
}

// tries reports whether the rest of the expression may match at at: the
// byte it needs is there.
func (a *anchor) tries(s string, at int) bool {
	if a.need == nil {
		return true
	}
	from, to := at+a.needFrom, min(len(s), at+a.needTo)
	for i := from; i < to; i++ {
		if a.need[s[i]] {
			return true
		}
	}
	return false
}

// anchorOf is the anchor of expr for keywords, or nil when it has none.
func anchorOf(expr string, keywords []string) *anchor {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return nil
	}
	parts := flatten(re, nil)
	i, before := 0, 0
	for i < len(parts) && minLen(parts[i]) == 0 {
		before = addLen(before, maxLen(parts[i]))
		i++
	}
	if i == len(parts) {
		return nil
	}
	rest := parts[i]
	if len(parts)-i > 1 {
		rest = &syntax.Regexp{Op: syntax.OpConcat, Sub: parts[i:]}
	}
	prog, err := syntax.Compile(rest.Simplify())
	if err != nil || !startsWithKeyword(prog, keywords) {
		return nil
	}
	compiled, err := regexp.Compile(`^(?:` + source(rest) + `)`)
	if err != nil {
		return nil
	}
	a := &anchor{rest: compiled, before: before, length: maxLen(rest)}
	// The byte needed: the first part after the keyword's that cannot
	// match nothing starts within the most bytes the parts before it
	// match.
	reach := maxLen(parts[i])
	j := i + 1
	for j < len(parts) && minLen(parts[j]) == 0 {
		reach = addLen(reach, maxLen(parts[j]))
		j++
	}
	if j < len(parts) && reach >= 0 {
		if need, ok := firstBytes(parts[j]); ok {
			a.need, a.needFrom, a.needTo = need, minLen(parts[i]), reach+1
		}
	}
	return a
}

// firstBytes is the set of bytes a match of re can start with, or false
// when it is not worth looking for (any byte, or a match may be empty).
func firstBytes(re *syntax.Regexp) (*[256]bool, bool) {
	var set [256]bool
	var add func(re *syntax.Regexp) bool // whether re may match nothing
	addRune := func(r rune, fold bool) {
		for f := r; ; {
			var b [utf8.UTFMax]byte
			utf8.EncodeRune(b[:], f)
			set[b[0]] = true
			if !fold {
				return
			}
			if f = unicode.SimpleFold(f); f == r {
				return
			}
		}
	}
	all := false
	add = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpLiteral:
			if len(re.Rune) == 0 {
				return true
			}
			addRune(re.Rune[0], re.Flags&syntax.FoldCase != 0)
			return false
		case syntax.OpCharClass:
			for k := 0; k+1 < len(re.Rune); k += 2 {
				lo, hi := re.Rune[k], re.Rune[k+1]
				if hi-lo > 256 {
					all = true
					return false
				}
				for r := lo; r <= hi; r++ {
					addRune(r, false)
				}
			}
			return len(re.Rune) == 0
		case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
			all = true
			return false
		case syntax.OpCapture, syntax.OpPlus:
			return add(re.Sub[0])
		case syntax.OpStar, syntax.OpQuest:
			add(re.Sub[0])
			return true
		case syntax.OpRepeat:
			empty := add(re.Sub[0])
			return empty || re.Min == 0
		case syntax.OpConcat:
			for _, sub := range re.Sub {
				if !add(sub) {
					return false
				}
			}
			return true
		case syntax.OpAlternate:
			empty := false
			for _, sub := range re.Sub {
				if add(sub) {
					empty = true
				}
			}
			return empty
		case syntax.OpNoMatch:
			return false
		}
		return true // the empty matches
	}
	if add(re) || all {
		return nil, false
	}
	return &set, true
}

// flatten appends the parts of a concatenation, nested ones included.
func flatten(re *syntax.Regexp, out []*syntax.Regexp) []*syntax.Regexp {
	if re.Op != syntax.OpConcat {
		return append(out, re)
	}
	for _, sub := range re.Sub {
		out = flatten(sub, out)
	}
	return out
}

// minLen is the fewest characters re matches.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpNoMatch:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n += minLen(sub)
		}
		return n
	case syntax.OpAlternate:
		n := -1
		for _, sub := range re.Sub {
			if m := minLen(sub); n < 0 || m < n {
				n = m
			}
		}
		return max(n, 0)
	}
	return 0 // the empty matches, star, quest
}

// maxLen is the most bytes re matches, -1 when there is no bound.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		n := 0
		for _, r := range re.Rune {
			n += runeBytes(r, re.Flags&syntax.FoldCase != 0)
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		n := maxLen(re.Sub[0])
		if n < 0 {
			return -1
		}
		return re.Max * n
	case syntax.OpConcat:
		n := 0
		for _, sub := range re.Sub {
			n = addLen(n, maxLen(sub))
		}
		return n
	case syntax.OpAlternate:
		n := 0
		for _, sub := range re.Sub {
			m := maxLen(sub)
			if m < 0 {
				return -1
			}
			n = max(n, m)
		}
		return n
	}
	return 0
}

// runeBytes is the length in UTF-8 of r, or of the longest rune that is r
// in another case.
func runeBytes(r rune, fold bool) int {
	n := utf8.RuneLen(r)
	if fold {
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			n = max(n, utf8.RuneLen(f))
		}
	}
	return max(n, 1)
}

func addLen(a, b int) int {
	if a < 0 || b < 0 {
		return -1
	}
	return a + b
}

// startsWithKeyword reports whether every match of prog starts with one of
// keywords, reading the program along the trie of the keywords (in lower
// case): from each state, every ASCII character it may match next must
// continue a keyword, until a keyword is complete. Characters outside
// ASCII are not followed (the keywords are found in ASCII case only).
func startsWithKeyword(prog *syntax.Prog, keywords []string) bool {
	type node struct {
		next map[byte]int
		end  bool
	}
	trie := []node{{next: map[byte]int{}}}
	for _, w := range keywords {
		n := 0
		for i := 0; i < len(w); i++ {
			c := lower(w[i])
			t, ok := trie[n].next[c]
			if !ok {
				t = len(trie)
				trie = append(trie, node{next: map[byte]int{}})
				trie[n].next[c] = t
			}
			n = t
		}
		if n == 0 {
			return false // an empty keyword
		}
		trie[n].end = true
	}
	type state struct {
		pc   uint32
		node int
	}
	seen := map[state]bool{}
	todo := []state{{uint32(prog.Start), 0}}
	for len(todo) > 0 {
		st := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if seen[st] || trie[st.node].end {
			continue
		}
		if seen[st] = true; len(seen) > 100000 {
			return false
		}
		inst := &prog.Inst[st.pc]
		switch inst.Op {
		case syntax.InstAlt, syntax.InstAltMatch:
			todo = append(todo, state{inst.Out, st.node}, state{inst.Arg, st.node})
		case syntax.InstCapture, syntax.InstNop, syntax.InstEmptyWidth:
			todo = append(todo, state{inst.Out, st.node})
		case syntax.InstMatch:
			return false // a match that ends before a keyword does
		case syntax.InstFail:
		default: // the rune instructions
			for r := rune(0); r < utf8.RuneSelf; r++ {
				if !inst.MatchRune(r) {
					continue
				}
				t, ok := trie[st.node].next[lower(byte(r))]
				if !ok {
					return false
				}
				todo = append(todo, state{inst.Out, t})
			}
		}
	}
	return true
}

// source writes re as an expression Go's regexp reads back to the same
// language, its groups not capturing. It is syntax.Regexp.String without
// what makes that slow for a long character class in a case-insensitive
// expression (working out which flags the class needs: 20 ms of the first
// use of gitleaks' generic rule): a class is written as the ranges it
// holds, its other cases included, and a literal's flags beside it.
func source(re *syntax.Regexp) string {
	var b strings.Builder
	writeSource(&b, re)
	return b.String()
}

func writeSource(b *strings.Builder, re *syntax.Regexp) {
	lazy := func() {
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteByte('?')
		}
	}
	group := func(sub *syntax.Regexp) {
		b.WriteString("(?:")
		writeSource(b, sub)
		b.WriteByte(')')
	}
	switch re.Op {
	case syntax.OpNoMatch:
		b.WriteString(`[^\x00-\x{10FFFF}]`)
	case syntax.OpEmptyMatch:
		b.WriteString(`(?:)`)
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		} else {
			b.WriteString("(?:")
		}
		for _, r := range re.Rune {
			writeRune(b, r)
		}
		b.WriteByte(')')
	case syntax.OpCharClass:
		b.WriteByte('[')
		if len(re.Rune) == 0 {
			b.WriteString(`^\x00-\x{10FFFF}`)
		}
		for i := 0; i+1 < len(re.Rune); i += 2 {
			writeRune(b, re.Rune[i])
			if re.Rune[i+1] != re.Rune[i] {
				b.WriteByte('-')
				writeRune(b, re.Rune[i+1])
			}
		}
		b.WriteByte(']')
	case syntax.OpAnyCharNotNL:
		b.WriteString(`[^\n]`)
	case syntax.OpAnyChar:
		b.WriteString(`(?s:.)`)
	case syntax.OpBeginLine:
		b.WriteString(`(?m:^)`)
	case syntax.OpEndLine:
		b.WriteString(`(?m:$)`)
	case syntax.OpBeginText:
		b.WriteString(`\A`)
	case syntax.OpEndText:
		b.WriteString(`\z`)
	case syntax.OpWordBoundary:
		b.WriteString(`\b`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`\B`)
	case syntax.OpCapture:
		group(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest:
		group(re.Sub[0])
		b.WriteString(map[syntax.Op]string{syntax.OpStar: "*", syntax.OpPlus: "+", syntax.OpQuest: "?"}[re.Op])
		lazy()
	case syntax.OpRepeat:
		group(re.Sub[0])
		b.WriteString("{" + strconv.Itoa(re.Min))
		if re.Max != re.Min {
			b.WriteByte(',')
			if re.Max >= 0 {
				b.WriteString(strconv.Itoa(re.Max))
			}
		}
		b.WriteByte('}')
		lazy()
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			group(sub)
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, sub := range re.Sub {
			if i > 0 {
				b.WriteByte('|')
			}
			writeSource(b, sub)
		}
		b.WriteByte(')')
	}
}

// writeRune writes r so that it stands for itself, in a class too.
func writeRune(b *strings.Builder, r rune) {
	if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
		b.WriteRune(r)
		return
	}
	b.WriteString(`\x{` + strconv.FormatInt(int64(r), 16) + `}`)
}
