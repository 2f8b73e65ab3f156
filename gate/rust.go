package gate

import (
	"bytes"
	"strconv"
	"unicode/utf8"
)

// A Rust source file keeps its unit tests beside the code they test, in a
// module compiled only for the tests: #[cfg(test)] mod tests { … }. That
// module is the file's part of the ruler (RustTests); the rest is the
// product's. The judge reads it with a scanner of Rust's tokens that
// knows what can hide a brace (comments, nested block comments, string,
// byte string and raw string literals, char literals beside lifetimes)
// and nothing more: a file it cannot read surely has no test part, for
// holding what it cannot read might hold product code, and regress
// honest work.

// rustBlock is a test module of a Rust file: its name and where its item
// is, from its first outer attribute (or its visibility, or mod) to its
// closing brace.
type rustBlock struct {
	name       string
	start, end int
}

// rustToken is a token of a Rust file: an identifier ('i', raw ones
// included, text "r#name"), a literal or a lifetime ('l'), or a byte of
// punctuation (its own kind: '#', '!', '{', …). An opening delimiter's
// match is the index of the token that closes it.
type rustToken struct {
	kind       byte
	start, end int
	match      int
}

// rustTestBlocks finds the test modules of a Rust file: each item `mod
// NAME { … }` whose outer attributes include #[cfg(test)] (other
// attributes, comments and a visibility may come between them and mod),
// or whose body starts with inner attributes that include #![cfg(test)].
// Only the outermost are found, at any depth, in the file's order. ok is
// false when the file cannot be read surely: a comment or a literal not
// closed, a delimiter without its match, a quote that starts neither a
// char literal nor a lifetime.
func rustTestBlocks(src []byte) (blocks []rustBlock, toks []rustToken, ok bool) {
	toks, ok = rustLex(src)
	if !ok {
		return nil, nil, false
	}
	text := func(i int) string { return string(src[toks[i].start:toks[i].end]) }
	kind := func(i int) byte {
		if i < len(toks) {
			return toks[i].kind
		}
		return 0
	}
	isWord := func(i int, w string) bool { return kind(i) == 'i' && text(i) == w }
	// attr says whether an attribute starts at i (outer, or inner with
	// bang), and whether it is cfg(test); next is the token after it.
	attr := func(i int, inner bool) (is, cfgTest bool, next int) {
		open := i + 1
		if inner {
			if kind(open) != '!' {
				return false, false, i
			}
			open++
		}
		if kind(i) != '#' || kind(open) != '[' {
			return false, false, i
		}
		end := toks[open].match
		cfgTest = end == open+5 && isWord(open+1, "cfg") && kind(open+2) == '(' && isWord(open+3, "test") && kind(open+4) == ')'
		return true, cfgTest, end + 1
	}
	// module says whether a module with a body starts at i (after its
	// outer attributes): [pub[(…)]] mod NAME {; open is its brace.
	module := func(i int) (name string, open int, is bool) {
		if isWord(i, "pub") {
			i++
			if kind(i) == '(' {
				i = toks[i].match + 1
			}
		}
		if !isWord(i, "mod") || kind(i+1) != 'i' || kind(i+2) != '{' {
			return "", 0, false
		}
		return text(i + 1), i + 2, true
	}
	// innerTest says whether the body opened at open starts with inner
	// attributes one of which is cfg(test).
	innerTest := func(open int) bool {
		for i := open + 1; ; {
			is, cfgTest, next := attr(i, true)
			if !is {
				return false
			}
			if cfgTest {
				return true
			}
			i = next
		}
	}
	for i := 0; i < len(toks); {
		if is, _, next := attr(i, true); is {
			i = next // an inner attribute: none of an item's
			continue
		}
		test, j := false, i
		for {
			is, cfgTest, next := attr(j, false)
			if !is {
				break
			}
			test, j = test || cfgTest, next
		}
		if name, open, is := module(j); is && (test || innerTest(open)) {
			close := toks[open].match
			blocks = append(blocks, rustBlock{name: name, start: toks[i].start, end: toks[close].end})
			i = close + 1
			continue
		}
		if j > i {
			i = j // attributes of another item; its tokens are read next
		} else {
			i++
		}
	}
	return blocks, toks, true
}

// rustLex cuts a Rust file into tokens, comments and white space left
// out; ok is false when it cannot do so surely (see rustTestBlocks).
func rustLex(src []byte) (toks []rustToken, ok bool) {
	i := 0
	if bytes.HasPrefix(src, []byte("#!")) && !bytes.HasPrefix(bytes.TrimLeft(src[2:], " \t\r\n"), []byte("[")) {
		// A shebang line, not an inner attribute.
		if j := bytes.IndexByte(src, '\n'); j >= 0 {
			i = j
		} else {
			i = len(src)
		}
	}
	var open []int // the indexes of the delimiters not closed yet
	add := func(kind byte, start, end int) {
		toks = append(toks, rustToken{kind: kind, start: start, end: end, match: -1})
	}
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			i++
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			if j := bytes.IndexByte(src[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(src)
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			depth := 0
			for {
				switch {
				case i+1 >= len(src):
					return nil, false // a block comment not closed
				case src[i] == '/' && src[i+1] == '*':
					depth++
					i += 2
				case src[i] == '*' && src[i+1] == '/':
					depth--
					i += 2
				default:
					i++
				}
				if depth == 0 {
					break
				}
			}
		case c == '"':
			end, ok := rustString(src, i)
			if !ok {
				return nil, false
			}
			add('l', start, end)
			i = end
		case c == '\'':
			end, ok := rustQuote(src, i)
			if !ok {
				return nil, false
			}
			add('l', start, end)
			i = end
		case identStart(c):
			i++
			for i < len(src) && identByte(src[i]) {
				i++
			}
			word := string(src[start:i])
			if word == "r" || word == "br" || word == "cr" {
				hashes := 0
				for i+hashes < len(src) && src[i+hashes] == '#' {
					hashes++
				}
				switch {
				case i+hashes < len(src) && src[i+hashes] == '"':
					end, ok := rustRawString(src, i+hashes+1, hashes)
					if !ok {
						return nil, false
					}
					add('l', start, end)
					i = end
					continue
				case word == "r" && hashes == 1 && i+1 < len(src) && identStart(src[i+1]):
					i += 2 // a raw identifier, r#name
					for i < len(src) && identByte(src[i]) {
						i++
					}
				}
			}
			add('i', start, i)
		case c >= '0' && c <= '9':
			i++
			for i < len(src) && (identByte(src[i]) || src[i] == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9') {
				i++
			}
			add('l', start, i)
		case c == '(' || c == '[' || c == '{':
			open = append(open, len(toks))
			add(c, start, i+1)
			i++
		case c == ')' || c == ']' || c == '}':
			if len(open) == 0 {
				return nil, false
			}
			o := open[len(open)-1]
			open = open[:len(open)-1]
			if want := opening(c); toks[o].kind != want {
				return nil, false
			}
			toks[o].match = len(toks)
			add(c, start, i+1)
			i++
		default:
			add(c, start, i+1)
			i++
		}
	}
	return toks, len(open) == 0
}

// opening is the delimiter that closing closes.
func opening(closing byte) byte {
	switch closing {
	case ')':
		return '('
	case ']':
		return '['
	}
	return '{'
}

// identStart says whether a byte starts an identifier: a letter, _, or a
// byte of a non-ASCII character.
func identStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

func identByte(c byte) bool { return identStart(c) || c >= '0' && c <= '9' }

// rustString is the end of the string literal whose quote is at i (of a
// byte or C string too: b"…", c"…"), escapes read.
func rustString(src []byte, i int) (int, bool) {
	for i++; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
		case '"':
			return i + 1, true
		}
	}
	return 0, false
}

// rustRawString is the end of the raw string whose content starts at i,
// closed by a quote and hashes #s.
func rustRawString(src []byte, i, hashes int) (int, bool) {
	closing := append([]byte{'"'}, bytes.Repeat([]byte{'#'}, hashes)...)
	j := bytes.Index(src[i:], closing)
	if j < 0 {
		return 0, false
	}
	return i + j + len(closing), true
}

// rustQuote is the end of what a quote at i starts: a char literal ('{',
// '\u{7FFF}', an escaped quote, b'x' after its b) or a lifetime or label
// ('a, 'static). A quote followed by neither is not read.
func rustQuote(src []byte, i int) (int, bool) {
	if i+1 >= len(src) {
		return 0, false
	}
	if src[i+1] == '\\' {
		// An escape: \n, \', \\, \x7F, \u{10FFFF}; the closing quote
		// comes within a few bytes.
		for j := i + 3; j < len(src) && j <= i+12; j++ {
			if src[j] == '\'' {
				return j + 1, true
			}
		}
		return 0, false
	}
	r, size := utf8.DecodeRune(src[i+1:])
	if r == utf8.RuneError && size <= 1 && src[i+1] >= 0x80 {
		return 0, false // not UTF-8: a file rustc would not read either
	}
	if j := i + 1 + size; j < len(src) && src[j] == '\'' {
		return j + 1, true // a char literal
	}
	if !identStart(src[i+1]) {
		return 0, false
	}
	j := i + 1
	for j < len(src) && identByte(src[j]) {
		j++
	}
	return j, true // a lifetime or a label
}

// rustTestsHeld is a Rust file that judges a cycle whose ruler is held:
// the cycle's file with the start's test modules in place of its own, by
// name (the nth module of a name for the nth): one only the cycle has is
// taken out, one only the start has is put at the end. changed says
// whether the two files' test modules differ. A file either of the two
// cannot read surely, or too large, is not held: the cycle's file,
// unchanged; and so is one whose held file would not read back with the
// start's modules alone (a module taken out can join what was on its two
// sides into something else).
func rustTestsHeld(start, cycle []byte) (held []byte, changed bool) {
	if len(start) > MaxRulerPart || len(cycle) > MaxRulerPart {
		return cycle, false
	}
	sb, _, ok1 := rustTestBlocks(start)
	cb, _, ok2 := rustTestBlocks(cycle)
	if !ok1 || !ok2 {
		return cycle, false
	}
	startText := map[string][]byte{}
	for _, k := range rustKeys(sb) {
		startText[k.key] = start[k.block.start:k.block.end]
	}
	used := map[string]bool{}
	var out []byte
	pos := 0
	for _, k := range rustKeys(cb) {
		out = append(out, cycle[pos:k.block.start]...)
		own := cycle[k.block.start:k.block.end]
		if s, ok := startText[k.key]; ok {
			used[k.key] = true
			out = append(out, s...)
			changed = changed || !bytes.Equal(s, own)
		} else {
			out = append(out, ' ') // a space, that nothing on its two sides joins
			changed = true
		}
		pos = k.block.end
	}
	out = append(out, cycle[pos:]...)
	for _, k := range rustKeys(sb) {
		if !used[k.key] {
			out = append(out, '\n')
			out = append(out, startText[k.key]...)
			out = append(out, '\n')
			changed = true
		}
	}
	if !changed {
		return cycle, false
	}
	// The held file must read back with the start's modules and no other.
	hb, _, ok := rustTestBlocks(out)
	if !ok || len(hb) != len(sb) {
		return cycle, false
	}
	for _, k := range rustKeys(hb) {
		if s, had := startText[k.key]; !had || !bytes.Equal(s, out[k.block.start:k.block.end]) {
			return cycle, false
		}
	}
	return out, true
}

// rustRestChanged says whether what is not a test module differs between
// two Rust files, as tokens: white space and comments aside. A file that
// cannot be read is one that changed.
func rustRestChanged(start, cycle []byte) bool {
	s, ok1 := rustRest(start)
	c, ok2 := rustRest(cycle)
	if !ok1 || !ok2 || len(s) != len(c) {
		return true
	}
	for i := range s {
		if !bytes.Equal(s[i], c[i]) {
			return true
		}
	}
	return false
}

// rustRest is the text of each token of a Rust file outside its test
// modules.
func rustRest(src []byte) ([][]byte, bool) {
	if len(src) > MaxRulerPart {
		return nil, false
	}
	blocks, toks, ok := rustTestBlocks(src)
	if !ok {
		return nil, false
	}
	var out [][]byte
	b := 0
	for _, t := range toks {
		for b < len(blocks) && blocks[b].end <= t.start {
			b++
		}
		if b < len(blocks) && t.start >= blocks[b].start {
			continue
		}
		out = append(out, src[t.start:t.end])
	}
	return out, true
}

type rustKey struct {
	key   string
	block rustBlock
}

// rustKeys names each block by its module's name and, after a NUL, how
// many of that name came before it: "tests", "tests\x001".
func rustKeys(blocks []rustBlock) []rustKey {
	seen := map[string]int{}
	out := make([]rustKey, len(blocks))
	for i, b := range blocks {
		k := b.name
		if n := seen[b.name]; n > 0 {
			k += "\x00" + strconv.Itoa(n)
		}
		seen[b.name]++
		out[i] = rustKey{k, b}
	}
	return out
}
