package main

import (
	"strings"

	"github.com/git-evolve/git-evolve/escape"
)

// termSafe is text that came from a check, a record, a note or a remote,
// made safe to print on a terminal (escape.Terminal): control characters
// other than tab and newline (escape sequences among them) are shown
// escaped, as \x1b, and invalid UTF-8 as U+FFFD. Nothing read from outside
// is printed raw.
func termSafe(s string) string { return escape.Terminal(s) }

// termLine is termSafe for a one-line field: newlines and tabs are shown
// escaped too.
func termLine(s string) string { return escape.TerminalLine(s) }

// indentLines prefixes every line of s with prefix.
func indentLines(s, prefix string) string {
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
