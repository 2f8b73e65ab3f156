package ledger

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
)

// LineError is a line of a note or file that could not be read as a record.
type LineError struct {
	Line int // 1-based
	Text string
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// EachLine calls fn with every line of JSON Lines data that is not blank,
// and its 1-based number, without the JSON whitespace (space, tab, CR)
// around it. Every reader of records splits lines this way.
func EachLine(data []byte, fn func(n int, line []byte)) {
	for n := 1; len(data) > 0; n++ {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.Trim(line, " \t\r")
		if len(line) > 0 {
			fn(n, line)
		}
	}
}

// ParseLines reads JSON Lines: one record per non-blank line. Lines that do
// not parse are returned as LineErrors; the others are still read.
func ParseLines(data []byte) ([]Record, []*LineError) {
	var recs []Record
	var bad []*LineError
	EachLine(data, func(n int, line []byte) {
		r, err := Parse(line)
		if err != nil {
			bad = append(bad, &LineError{Line: n, Text: string(line), Err: err})
			return
		}
		recs = append(recs, r)
	})
	return recs, bad
}

// BadLines returns the lines of JSON Lines data that ParseLines reports,
// without building a record of the others: a line in canonical form (every
// line git-evolve writes) is known to parse by Summarize alone. A reader
// that only asks whether a note parses pays for what does not.
func BadLines(data []byte) []*LineError {
	var bad []*LineError
	EachLine(data, func(n int, line []byte) {
		if _, ok := Summarize(line); ok {
			return
		}
		if _, err := Parse(line); err != nil {
			bad = append(bad, &LineError{Line: n, Text: string(line), Err: err})
		}
	})
	return bad
}

// FormatNote returns a note's content: one canonical line per record,
// sorted and without duplicate lines, each ending in a newline. This is the
// fixed point of `git notes merge -s cat_sort_uniq`, so a merge of two
// identical notes changes nothing. Lines that did not parse (unknown) are
// kept verbatim so that nothing is lost when a note is rewritten.
func FormatNote(recs []Record, unknown []string) []byte {
	lines := make([]string, 0, len(recs)+len(unknown))
	for i := range recs {
		lines = append(lines, string(recs[i].Marshal()))
	}
	lines = append(lines, unknown...)
	sort.Strings(lines)
	var b bytes.Buffer
	for i, l := range lines {
		if i > 0 && l == lines[i-1] {
			continue
		}
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// MarkerName is the non-note entry at the root of the ledger's notes tree
// that holds the ledger's schema version. Its name is not hex, so git keeps
// it and never mistakes it for a note.
const MarkerName = "evolve-ledger.json"

// Version is the ledger schema version this git-evolve writes. A ledger whose
// marker names a newer version is never written by this binary.
var Version = mustSchemaVersion("1.1.0")

func mustSchemaVersion(s string) SchemaVersion {
	v, ok := ParseSchemaVersion(s)
	if !ok {
		panic("not a schema version: " + s)
	}
	return v
}

// Marker is the content of MarkerName.
type Marker struct {
	Schema string `json:"schema"`
}

// MarkerBytes is the marker this binary writes.
func MarkerBytes() []byte {
	b, _ := json.Marshal(Marker{Schema: Version.String()})
	return append(b, '\n')
}

// CheckWritable returns an error when the marker (the content of MarkerName,
// nil when the ledger has none) names a schema newer than Version, or cannot
// be read: writing such a ledger could corrupt it.
func CheckWritable(marker []byte) error {
	if marker == nil {
		return nil
	}
	var m Marker
	if err := json.Unmarshal(marker, &m); err != nil {
		return fmt.Errorf("the ledger's %s does not parse (%v); refusing to write to a ledger this git-evolve does not understand", MarkerName, err)
	}
	v, ok := ParseSchemaVersion(m.Schema)
	if !ok {
		return fmt.Errorf("the ledger's schema version %q is not a version; refusing to write to a ledger this git-evolve does not understand", m.Schema)
	}
	if v.Compare(Version) > 0 {
		return fmt.Errorf("the ledger uses schema %s, newer than the %s this git-evolve writes; upgrade git-evolve to write to it", v, Version)
	}
	return nil
}

// Cycles returns the cycle number of each record of a note, in order,
// reading a line in canonical form (all lines git-evolve writes) without
// building its Record; lines that do not parse are left out, as
// ParseLines leaves them out of its records.
func Cycles(data []byte) []int {
	var out []int
	eachCycle(data, func(n int) { out = append(out, n) })
	return out
}

// MaxCycle is the largest of Cycles(data), ok false when there is none,
// read without keeping the others.
func MaxCycle(data []byte) (n int, ok bool) {
	eachCycle(data, func(c int) {
		if !ok || c > n {
			n, ok = c, true
		}
	})
	return n, ok
}

func eachCycle(data []byte, fn func(int)) {
	EachLine(data, func(_ int, line []byte) {
		if sum, ok := Summarize(line); ok {
			fn(sum.Cycle)
			return
		}
		if r, err := Parse(line); err == nil {
			fn(r.Cycle)
		}
	})
}
