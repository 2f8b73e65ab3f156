package ledger

import (
	"bytes"
	"math"
	"strconv"
)

// Summary is what listing a record needs (its order and the fields logs
// filter on), read from a canonical line without building a Record. The
// byte slices point into the line.
type Summary struct {
	Cycle     int
	ID        []byte
	Target    []byte
	Result    []byte
	Timestamp []byte
}

// Summarize reads a line's Summary when the line is in canonical form, that
// is when Marshal(Parse(line)) would give the line back unchanged; ok is
// false for any other line (whitespace, legacy names, escapes, fields out
// of order, values Marshal would write differently, errors), which callers
// then read with Parse. Lines git-evolve writes are canonical, so reading
// and printing a ledger rarely builds a Record.
func Summarize(line []byte) (sum Summary, ok bool) {
	sum, _, ok = summarize(line, nil, false)
	return sum, ok
}

// summarize is Summarize that also gives the line's members, appended to
// dst, when collect is set (TableRecord reads them: one pass over the line,
// not two).
func summarize(line []byte, dst []member, collect bool) (sum Summary, members []member, ok bool) {
	members = dst
	n := len(line)
	if n < 2 || line[0] != '{' || line[n-1] != '}' {
		return sum, nil, false
	}
	s := scanner{data: line, pos: 1}
	last := -1       // index of the last known field seen
	var extra []byte // the last unknown key seen
	haveV, haveCycle := false, false
	for {
		kstart := s.pos
		key, ok := s.plainKey()
		if !ok {
			return sum, nil, false
		}
		vs, ve, err := s.value()
		if err != nil || s.spaced {
			return sum, nil, false
		}
		val := line[vs:ve]
		if collect {
			members = append(members, member{kstart: kstart, kend: kstart + len(key) + 2, start: vs, end: ve})
		}
		if i, known := fieldIndex[string(key)]; known {
			if extra != nil || i <= last {
				return sum, nil, false
			}
			last = i
			if !canonicalField(i, val, &sum) {
				return sum, nil, false
			}
			haveV = haveV || i == 0
			haveCycle = haveCycle || i == fieldIndex["cycle"]
		} else {
			if _, old := legacyIndex[string(key)]; old {
				return sum, nil, false
			}
			if extra != nil && bytes.Compare(key, extra) <= 0 {
				return sum, nil, false
			}
			extra = key
		}
		if s.pos >= n {
			return sum, nil, false
		}
		if line[s.pos] == '}' {
			return sum, members, s.pos == n-1 && haveV && haveCycle
		}
		if line[s.pos] != ',' {
			return sum, nil, false
		}
		s.pos++
	}
}

// plainKey reads a key and its colon; ok is false unless the key is plain
// printable ASCII that Marshal writes as it is.
func (s *scanner) plainKey() ([]byte, bool) {
	if s.pos >= len(s.data) || s.data[s.pos] != '"' {
		return nil, false
	}
	start := s.pos
	esc, err := s.str()
	if err != nil || esc || s.pos >= len(s.data) || s.data[s.pos] != ':' {
		return nil, false
	}
	key := s.data[start+1 : s.pos-1]
	s.pos++
	return key, plainASCII(key)
}

// plainASCII reports whether appendString copies b as it is.
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainString returns the contents of a string token that Marshal writes
// as it is.
func plainString(v []byte) ([]byte, bool) {
	if len(v) < 2 || v[0] != '"' {
		return nil, false
	}
	inner := v[1 : len(v)-1]
	return inner, plainASCII(inner)
}

// canonicalInt parses an integer token written as strconv writes it, within
// the range Parse accepts.
func canonicalInt(v []byte, negative bool) (int, bool) {
	if len(v) == 0 || len(v) > 11 {
		return 0, false
	}
	digits := v
	if v[0] == '-' {
		if !negative || len(v) < 2 {
			return 0, false
		}
		digits = v[1:]
	}
	if digits[0] == '0' && len(v) != 1 {
		return 0, false // leading zero or -0
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil || n > math.MaxInt32 || n < math.MinInt32 {
		return 0, false
	}
	return int(n), true
}

// canonicalField checks the value of known field i as Marshal writes it and
// fills the summary.
func canonicalField(i int, v []byte, sum *Summary) bool {
	switch knownFields[i] {
	case "v":
		return string(v) == strconv.Itoa(SchemaMajor)
	case "cycle":
		n, ok := canonicalInt(v, false)
		sum.Cycle = n
		return ok
	case "goals_passing", "goals_total", "idle_streak":
		_, ok := canonicalInt(v, true)
		return ok
	case "quality_score":
		f, err := strconv.ParseFloat(string(v), 64)
		return err == nil && v[0] != '"' && !math.IsInf(f, 0) && !math.IsNaN(f) &&
			string(strconv.AppendFloat(nil, f, 'g', -1, 64)) == string(v)
	case "parallel":
		return string(v) == "true"
	case "goal_ids":
		return plainStringArray(v)
	case "gate":
		return string(v) != "null"
	case "trace":
		return canonicalTrace(v)
	}
	// The string fields: present only when not empty.
	inner, ok := plainString(v)
	if !ok || len(inner) == 0 {
		return false
	}
	switch knownFields[i] {
	case "id":
		sum.ID = inner
	case "target":
		sum.Target = inner
	case "result":
		sum.Result = inner
	case "timestamp":
		sum.Timestamp = inner
	}
	return true
}

func plainStringArray(v []byte) bool {
	if len(v) < 2 || v[0] != '[' || v[len(v)-1] != ']' {
		return false
	}
	if len(v) == 2 {
		return true
	}
	s := scanner{data: v, pos: 1}
	for {
		start, end, err := s.value()
		if err != nil {
			return false
		}
		if _, ok := plainString(v[start:end]); !ok {
			return false
		}
		if s.pos >= len(v) {
			return false
		}
		if v[s.pos] == ']' {
			return s.pos == len(v)-1
		}
		if v[s.pos] != ',' {
			return false
		}
		s.pos++
	}
}

// canonicalTrace checks a trace object as Trace.Marshal writes it: known
// fields in order with plain string values (empty allowed), then other
// fields sorted by name.
func canonicalTrace(v []byte) bool {
	n := len(v)
	if n < 2 || v[0] != '{' || v[n-1] != '}' {
		return false
	}
	if n == 2 {
		return true
	}
	s := scanner{data: v, pos: 1}
	last := -1
	var extra []byte
	for {
		key, ok := s.plainKey()
		if !ok {
			return false
		}
		vs, ve, err := s.value()
		if err != nil || s.spaced {
			return false
		}
		if i, known := traceIndex[string(key)]; known {
			if extra != nil || i <= last {
				return false
			}
			last = i
			if _, ok := plainString(v[vs:ve]); !ok {
				return false
			}
		} else {
			if extra != nil && bytes.Compare(key, extra) <= 0 {
				return false
			}
			extra = key
		}
		if s.pos >= n {
			return false
		}
		if v[s.pos] == '}' {
			return s.pos == n-1
		}
		if v[s.pos] != ',' {
			return false
		}
		s.pos++
	}
}

// SummaryOf is the Summary of a parsed record.
func SummaryOf(r *Record) Summary {
	return Summary{Cycle: r.Cycle, ID: []byte(r.ID), Target: []byte(r.Target),
		Result: []byte(r.Result), Timestamp: []byte(r.Timestamp)}
}

// Compare orders summaries as Less orders records: by cycle, then
// timestamp, then id.
func (a *Summary) Compare(b *Summary) int {
	switch {
	case a.Cycle != b.Cycle:
		if a.Cycle < b.Cycle {
			return -1
		}
		return 1
	case !bytes.Equal(a.Timestamp, b.Timestamp):
		return bytes.Compare(a.Timestamp, b.Timestamp)
	}
	return bytes.Compare(a.ID, b.ID)
}
