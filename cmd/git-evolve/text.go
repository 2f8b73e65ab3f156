package main

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// termSafe is text that came from a check, a record, a note or a remote,
// made safe to print on a terminal: control characters other than tab and
// newline (escape sequences among them) are shown escaped, as \x1b, and
// invalid UTF-8 as U+FFFD. Nothing read from outside is printed raw.
func termSafe(s string) string { return escapeControls(s, "\t\n") }

// termLine is termSafe for a one-line field: newlines and tabs are shown
// escaped too.
func termLine(s string) string { return escapeControls(s, "") }

func escapeControls(s, keep string) string {
	clean := true
	for _, r := range s {
		if r == utf8.RuneError || isControl(r) && !strings.ContainsRune(keep, r) {
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
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isControl(r rune) bool { return r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f }

// indentLines prefixes every line of s with prefix.
func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
