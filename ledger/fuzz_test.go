package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// errorLines are lines Parse must reject (see TestParseErrors).
var errorLines = []string{
	`not json`, ``, `[{"cycle":1}]`, `null`, `"cycle"`, `1`, `{"cycle":1`,
	`{"cycle":1}{"cycle":2}`, `{"cycle":1} {"cycle":2}`, `{"cycle":1} x`, `{"cycle":1}]`, `{"cycle":1}}`,
	`{"target":"x","result":"improved"}`, `{"cycle":null}`, `{"cycle":"3"}`, `{"cycle":true}`, `{"cycle":-1}`,
	`{"cycle":1.5}`, `{"cycle":99999999999}`, `{"cycle":1e300}`, `{"cycle":1e-400}`,
	`{"cycle":1,"goals_passing":"x"}`, `{"cycle":1,"goals_total":1.5}`, `{"cycle":1,"idle_streak":"2"}`,
	`{"cycle":1,"quality_score":"high"}`, `{"cycle":1,"quality_score":"0.5"}`, `{"cycle":1,"quality_score":1e999}`,
	`{"cycle":1,"parallel":"yes"}`, `{"cycle":1,"parallel":1}`, `{"cycle":1,"goal_ids":[1]}`,
	`{"cycle":1,"goal_ids":"a"}`, `{"cycle":1,"goal_ids":["a",null]}`, `{"cycle":1,"target":5}`,
	`{"cycle":1,"sha":["a"]}`, `{"cycle":1,"id":1}`, `{"cycle":1,"timestamp":{}}`, `{"cycle":1,"goal_id":5}`,
	`{"cycle":1,"trace":"str"}`, `{"cycle":1,"trace":[]}`, `{"cycle":1,"trace":{"gherkin":3}}`,
	`{"cycle":1,"trace":{"red_evidence":{"a":1}}}`, `{"v":2,"cycle":1}`, `{"v":2,"cycle":"x","trace":7}`,
	`{"v":0,"cycle":1}`, `{"v":"1","cycle":1}`, `{"v":1.5,"cycle":1}`,
}

// bugLines are inputs that once showed bugs, now fixed; they stay as seeds.
var bugLines = []string{
	`{"cycle":1,"target":"","goal_id":"b"}`,
	`{"cycle":1,"target":null,"goal_id":"b"}`,
	`{"cycle":1,"sha":null,"commit":"x"}`,
	`{"cycle":1,"timestamp":"","started_at":"2026-01-01T00:00:00Z"}`,
	`{"cycle":1,"commit_sha":"a","commit":"b"}`,
	`{"cycle":1,"commit_sha":5,"commit":"b"}`,
	`{"cycle":0,"commit_sha":"","commit":""}`,
	`{"cycle":1,"goal_id":null,"target":""}`,
}

// knownParseBug names the known bug that explains a property failure for
// line (parsed as r), or returns "".
func knownParseBug(line []byte, r *Record) string {
	if r != nil {
		if why := shadowedLegacy(r); why != "" {
			return why
		}
	}
	if m, err := decodeObject(line); err == nil {
		if ids, ok := m["goal_ids"].([]any); ok {
			for _, id := range ids {
				if id == nil {
					return `a null goal id is read as ""`
				}
			}
		}
	}
	return ""
}

func FuzzParse(f *testing.F) {
	for _, l := range validLines {
		f.Add([]byte(l))
	}
	for _, l := range errorLines {
		f.Add([]byte(l))
	}
	for _, l := range bugLines {
		f.Add([]byte(l))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		r, err := Parse(line)
		// Parse and encoding/json agree on what is one JSON object.
		var obj map[string]json.RawMessage
		isObject := json.Unmarshal(line, &obj) == nil && obj != nil
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse(%q) error %v (%T) is not a *FieldError", line, err, err)
			}
			if fe.Field == "" && isObject {
				t.Fatalf("Parse(%q) = %v, but it is one JSON object", line, err)
			}
			if fe.Field != "" && !isObject {
				t.Fatalf("Parse(%q) = %v about a field, but it is not one JSON object", line, err)
			}
			return
		}
		fail := func(format string, args ...any) {
			t.Helper()
			if why := knownParseBug(line, &r); why != "" {
				t.Fatalf("fixed bug is back (%s): "+format, append([]any{why}, args...)...)
			}
			t.Fatalf(format, args...)
		}
		if !isObject {
			t.Fatalf("Parse(%q) succeeds, but encoding/json does not read it as one object", line)
		}
		if r.V < 1 || r.V > SchemaMajor || r.Cycle < 0 {
			t.Fatalf("Parse(%q) gives v %d, cycle %d", line, r.V, r.Cycle)
		}
		m1 := r.Marshal()
		if !json.Valid(m1) || bytes.ContainsAny(m1, "\n\r") {
			t.Fatalf("Marshal(Parse(%q)) = %q is not one line of JSON", line, m1)
		}
		if again, err := Parse(line); err != nil || !bytes.Equal(again.Marshal(), m1) {
			if hasAmbiguousLegacySHA(line) {
				t.Fatalf("fixed bug is back: Parse(%q) resolves commit_sha and commit in map order", line)
			}
			t.Fatalf("Parse(%q) is not deterministic: %s then %s (%v)", line, m1, again.Marshal(), err)
		}
		r2, err := Parse(m1)
		if err != nil {
			fail("Parse(Marshal(Parse(%q))) = %v; canonical form %s", line, err, m1)
		}
		if m2 := r2.Marshal(); !bytes.Equal(m1, m2) {
			fail("canonical form of %q is not stable:\n %s\n %s", line, m1, m2)
		}
		const attached = "0123456789abcdef0123456789abcdef01234567"
		if a, b := r.DeriveID(attached), r2.DeriveID(attached); a != b || !hexID.MatchString(a) {
			fail("DeriveID of %q changes across a round trip: %s, %s", line, a, b)
		}
		if r.DeriveID("") == r.DeriveID(attached) {
			t.Fatalf("DeriveID of %q ignores the attached commit", line)
		}
		if err := checkLossless(line, m1); err != nil {
			fail("Parse→Marshal of %q is lossy: %v\n out %s", line, err, m1)
		}
	})
}

func FuzzParseLines(f *testing.F) {
	f.Add([]byte(strings.Join([]string{seed1, seed2, seed3, seed4}, "\n") + "\n"))
	f.Add([]byte(seed1 + "\n\n  \nnot json\r\n" + seed3 + "\r\n{\"cycle\":\"3\"}\n" + lineLegacy))
	f.Add([]byte(strings.Join(validLines, "\n")))
	f.Add([]byte(strings.Join(errorLines, "\n")))
	f.Add([]byte(strings.Join(bugLines, "\n")))
	f.Add([]byte(""))
	f.Add([]byte("\n\n"))
	// records nested past the bound (a hostile remote's), and within it
	f.Add([]byte(seed1 + "\n" + `{"v":1,"cycle":2,"x":` + nested(maxDepth+5, "mixed") + "}\n" + seed3))
	f.Add([]byte(`{"v":1,"cycle":2,"trace":{"z":` + nested(maxDepth-2, "array") + "}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recs, bad := ParseLines(data)
		// BadLines finds the same lines without building the records.
		if only := BadLines(data); len(only) != len(bad) {
			t.Fatalf("BadLines gives %d lines, ParseLines %d", len(only), len(bad))
		} else {
			for i := range only {
				if only[i].Line != bad[i].Line || only[i].Text != bad[i].Text || only[i].Err.Error() != bad[i].Err.Error() {
					t.Fatalf("BadLines[%d] = %v, ParseLines says %v", i, only[i], bad[i])
				}
			}
		}
		// Cycles reads the same numbers without building the records.
		cycles := Cycles(data)
		if len(cycles) != len(recs) {
			t.Fatalf("Cycles gives %d numbers for %d records", len(cycles), len(recs))
		}
		for i, r := range recs {
			if cycles[i] != r.Cycle {
				t.Fatalf("Cycles[%d] = %d, the record says %d", i, cycles[i], r.Cycle)
			}
		}
		lines := bytes.Split(data, []byte("\n"))
		nonBlank := 0
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) > 0 {
				nonBlank++
			}
		}
		if len(recs)+len(bad) != nonBlank {
			t.Fatalf("ParseLines: %d records + %d bad lines for %d non-blank lines", len(recs), len(bad), nonBlank)
		}
		prev := 0
		for _, le := range bad {
			if le.Line <= prev || le.Line > len(lines) {
				t.Fatalf("bad line number %d (previous %d, %d lines)", le.Line, prev, len(lines))
			}
			prev = le.Line
			if want := string(bytes.TrimSpace(lines[le.Line-1])); le.Text != want || want == "" {
				t.Fatalf("line %d text = %q, want %q", le.Line, le.Text, want)
			}
			var fe *FieldError
			if le.Err == nil || !errors.As(le, &fe) {
				t.Fatalf("line %d: error %v is not a *FieldError", le.Line, le.Err)
			}
		}
		// Every good line is a record, in order.
		var texts []string
		for i, l := range lines {
			l = bytes.TrimSpace(l)
			if len(l) == 0 {
				continue
			}
			if len(bad) > 0 && bad[0].Line == i+1 {
				bad = bad[1:]
				texts = append(texts, string(l))
				continue
			}
			if len(recs) == 0 {
				t.Fatalf("line %d is neither a record nor a bad line", i+1)
			}
			if r, err := Parse(l); err != nil || !bytes.Equal(r.Marshal(), recs[0].Marshal()) {
				if hasAmbiguousLegacySHA(l) {
					t.Fatalf("fixed bug is back: line %d %q parses differently twice", i+1, l)
				}
				t.Fatalf("line %d %q: record %s, Parse gives %s (%v)", i+1, l, recs[0].Marshal(), r.Marshal(), err)
			}
			recs = recs[1:]
		}
		recs, _ = ParseLines(data)
		note := FormatNote(recs, texts)
		if again := reformat(note); !bytes.Equal(again, note) {
			for i := range recs {
				if why := knownParseBug([]byte(recs[i].Marshal()), &recs[i]); why != "" {
					t.Fatalf("fixed bug is back (%s): FormatNote not idempotent", why)
				}
			}
			t.Fatalf("FormatNote is not idempotent:\n%s\n---\n%s", note, again)
		}
		if merged := catSortUniq(note, note); !bytes.Equal(merged, note) {
			t.Fatalf("FormatNote output is not a cat_sort_uniq fixed point:\n%s\n---\n%s", note, merged)
		}
	})
}

// FuzzJSONString holds ExtraString's shortcut to what encoding/json gives.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{`"Bench <bench@example.com>"`, `"vm"`, `""`, `"a\"b"`, `"\u00e9"`, "\"\xff\"", "\"tab\there\"",
		`null`, `1`, ` "x"`, `"x" `, `"a" "b"`, `"`, `"\ud800"`, `{"a":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var want string
		if json.Unmarshal(raw, &want) != nil {
			want = ""
		}
		r := Record{Extra: map[string]json.RawMessage{"by": raw}}
		if got := r.ExtraString("by"); got != want {
			t.Fatalf("ExtraString(%q) = %q, encoding/json gives %q", raw, got, want)
		}
	})
}
