package queue

import (
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxBlockerScan bounds how much of a failure's output FindBlocker reads:
// its end, where a failure says what stopped it.
const MaxBlockerScan = 64 << 10

// maxBlockerID bounds an id read from a failure's output.
const maxBlockerID = 64

var (
	// blockerSays is a failure's word for what blocks it (seed 004's
	// dynamic blocker detection: "blocked by", "requires", "depends on"),
	// then the id: `backquoted`, or a bare word.
	blockerSays = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile("(?i)\\b(?:blocked\\s+by|blocker:|requires|depends\\s+on)[\\s:]+(?:`([^`\\s]{1,64})`|([A-Za-z0-9][A-Za-z0-9._/-]{0,63}))")
	})
	// beadID is the shape of a tracker's issue id (bd's rig-8z29,
	// ag-123, soc-y5vh.4): letters, a hyphen, letters and digits.
	beadID = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9]*[0-9][A-Za-z0-9]*(?:\.[0-9]+)*$`)
	})
)

// FindBlocker reads the output of a failed cycle on item self (the
// agent's words, the gate's failures) for the work it says blocks it:
// "blocked by X", "requires X", "depends on X" or "blocker: X", where X is
// `backquoted`, a bead id (rig-8z29), or an id known says is one (a
// roadmap item's). The last such mention wins: the end of the output says
// what stopped the work. It returns "" when the output names none, or
// names only self. Only the last MaxBlockerScan bytes are read; the output
// is untrusted, so what it returns is a bounded word of printable
// characters without spaces or backquotes.
func FindBlocker(output, self string, known func(string) bool) string {
	if len(output) > MaxBlockerScan {
		output = output[len(output)-MaxBlockerScan:]
	}
	found := ""
	for _, m := range blockerSays().FindAllStringSubmatch(output, -1) {
		id := m[1]
		if id == "" {
			id = strings.TrimRight(m[2], ".,;:/")
			if !beadID().MatchString(id) && (known == nil || !known(id)) {
				continue // a word ("requires Go 1.22"), not an id
			}
		}
		if id == self || !usableID(id) {
			continue
		}
		found = id
	}
	return found
}

// usableID reports whether id can be kept and shown: valid UTF-8, at most
// maxBlockerID bytes, printable, no space and no backquote.
func usableID(id string) bool {
	if id == "" || len(id) > maxBlockerID || !utf8.ValidString(id) {
		return false
	}
	for _, r := range id {
		if r <= ' ' || r == '`' || r == 0x7f || (r >= 0x80 && r <= 0x9f) || r == utf8.RuneError {
			return false
		}
	}
	return true
}
