// Package escape makes text that came from outside the tool (a record from
// a note or a remote, a commit message, a check's output, a queue item, an
// agent's file) safe to show, so that it stays text wherever it is shown:
//
//   - on a terminal, its control characters (escape sequences among them)
//     are shown escaped, as \x1b, and invalid UTF-8 as U+FFFD (Terminal,
//     TerminalLine);
//   - in Markdown, every character that Markdown, GitHub's flavour of it or
//     a forge acts on is shown as itself: no HTML, no link, image, autolink,
//     emphasis, code, heading, list, table cell, mention or issue reference
//     comes out of it (Markdown, one line of text; Code, a code span;
//     CodeBlock, a fenced block).
//
// Every writer of Markdown (git evolve log --markdown, git evolve report and
// its job summary, the agent's brief, the escalations file) goes through
// these; nothing read from outside is written raw.
package escape

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Terminal is text made safe to print on a terminal: control characters
// other than tab and newline are shown escaped (\x1b, \u0085), and invalid
// UTF-8 as U+FFFD.
func Terminal(s string) string { return controls(s, "\t\n", false) }

// TerminalLine is Terminal for a one-line field: newlines and tabs are
// shown escaped too.
func TerminalLine(s string) string { return controls(s, "", false) }

// controls shows escaped the control characters of s but those in keep,
// and with format too Unicode's format characters and line and paragraph
// separators (bidirectional overrides, zero-width characters), which can
// make text read otherwise than it is.
func controls(s, keep string, format bool) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || isControl(r) && !strings.ContainsRune(keep, r) || format && isFormat(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteRune(utf8.RuneError)
		case isControl(r) && !strings.ContainsRune(keep, r):
			if r < 0x80 {
				fmt.Fprintf(&b, `\x%02x`, r)
			} else {
				fmt.Fprintf(&b, `\u%04x`, r)
			}
		case format && isFormat(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }

func isFormat(r rune) bool {
	return r >= 0xa0 && (unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp))
}

// zeroWidth is a zero-width space, as a character reference: put after an
// @, a # or the colon of :// it keeps a forge from reading a mention, an
// issue reference or an address there, and shows nothing.
const zeroWidth = "&#8203;"

// Markdown is text shown as itself in Markdown, on one line: in a table
// cell, a list item, a heading or a paragraph, wherever the line puts it.
//
// Newlines become spaces; control and format characters are shown escaped
// (\x1b, \u202e) and invalid UTF-8 as U+FFFD. &, < and > are written as
// character references (no HTML, no entity, no <autolink>); every other
// character Markdown acts on inline ( \ ` * _ [ ] ~ | $ # ; with [ escaped,
// ! and ( ) make no image or link) is escaped with a backslash; so are the
// marks a line could start with (a list's - + 1. or 1), a heading's =, an
// indentation). A zero-width space
// follows each @, each #, the dash of GH- and the colon of ://, and comes
// before the dot of www., where a forge would otherwise link a mention, an
// issue, an e-mail address or a web address found in the text after it was
// rendered.
func Markdown(s string) string {
	s = controls(strings.ReplaceAll(s, "\n", " "), "", true)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '&':
			b.WriteString("&amp;")
		case c == '<':
			b.WriteString("&lt;")
		case c == '>':
			b.WriteString("&gt;")
		case c == '#':
			b.WriteString(`\#` + zeroWidth)
		case c == '@':
			b.WriteString("@" + zeroWidth)
		case c == ':' && strings.HasPrefix(s[i+1:], "//"):
			b.WriteString(":" + zeroWidth)
		case c == '.' && i >= 3 && strings.EqualFold(s[i-3:i], "www"):
			b.WriteString(zeroWidth + ".")
		case c == '-' && i >= 2 && strings.EqualFold(s[i-2:i], "gh"):
			b.WriteString("-" + zeroWidth) // GH-123, an issue reference
		case strings.IndexByte("\\`*_[]~|$", c) >= 0:
			b.WriteByte('\\')
			b.WriteByte(c)
		case i == 0 && (c == '-' || c == '+' || c == '='):
			// what would start a list or underline a heading
			b.WriteByte('\\')
			b.WriteByte(c)
		case i == 0 && c == ' ':
			b.WriteString("&#32;") // no indentation: no code block
		case (c == '.' || c == ')') && i > 0 && i <= 9 && strings.Trim(s[:i], "0123456789") == "":
			b.WriteByte('\\') // 1. or 1) would start an ordered list
			b.WriteByte(c)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// MarkdownLines is Markdown for text of several lines (a description, a
// directive's body): each line escaped as Markdown escapes one, so that the
// lines, and the blank lines between paragraphs, are kept.
func MarkdownLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = Markdown(l)
	}
	return strings.Join(lines, "\n")
}

// Code is text as a code span, with its backticks: on one line (newlines
// become spaces, control and format characters are shown escaped), between
// backticks longer than any run of them in the text, so that nothing in it
// ends the span; a span shows everything in it as it is (no HTML, no link,
// no mention). Not for a table cell: a | in it would end the cell.
func Code(s string) string {
	s = controls(strings.ReplaceAll(s, "\n", " "), "", true)
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if s == "" || s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		s = " " + s + " " // the one space each side a span drops
	}
	return fence + s + fence
}

// CodeBlock is text as a fenced code block, each line after indent (for a
// block inside a list item): control and format characters but tabs are
// shown escaped, and the fence is longer than any run of backticks in the
// text, so that no line of it closes the block. The block ends with a
// newline.
func CodeBlock(s, indent string) string {
	s = controls(s, "\t\n", true)
	fence := strings.Repeat("`", max(3, longestRun(s, '`')+1))
	var b strings.Builder
	b.WriteString(indent + fence + "\n")
	for _, line := range strings.Split(s, "\n") {
		b.WriteString(indent + line + "\n")
	}
	b.WriteString(indent + fence + "\n")
	return b.String()
}

func longestRun(s string, c byte) int {
	longest, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			longest = max(longest, n)
		} else {
			n = 0
		}
	}
	return longest
}
