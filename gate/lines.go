package gate

import (
	"bytes"
	"time"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// binaryProbe is how much of a file is looked at for a NUL byte, as git
// does, to call it binary.
const binaryProbe = 8000

// Binary reports whether content is binary the way git decides it: a NUL
// byte in its first 8000 bytes.
func Binary(content []byte) bool {
	return bytes.IndexByte(content[:min(len(content), binaryProbe)], 0) >= 0
}

// CountLines counts the lines inserted and deleted from old to new (either
// may be nil: a file added or removed) by a line diff. Binary content
// counts no lines.
func CountLines(old, new []byte) (insertions, deletions int, binary bool) {
	if Binary(old) || Binary(new) {
		return 0, 0, true
	}
	if len(old) == 0 {
		return lines(new), 0, false
	}
	if len(new) == 0 {
		return 0, lines(old), false
	}
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 2 * time.Second // past it the diff is still right, only less short
	a, b, _ := dmp.DiffLinesToRunes(string(old), string(new))
	for _, d := range dmp.DiffMainRunes(a, b, false) {
		// Each rune of a line diff's text stands for one line.
		switch d.Type {
		case diffmatchpatch.DiffInsert:
			insertions += utf8.RuneCountInString(d.Text)
		case diffmatchpatch.DiffDelete:
			deletions += utf8.RuneCountInString(d.Text)
		}
	}
	return insertions, deletions, false
}

// lines counts the lines of a text, a last one without a newline included.
func lines(text []byte) int {
	n := bytes.Count(text, []byte{'\n'})
	if len(text) > 0 && text[len(text)-1] != '\n' {
		n++
	}
	return n
}
