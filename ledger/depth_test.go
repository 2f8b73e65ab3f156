package ledger

import (
	"strings"
	"testing"
)

// nested is a JSON value n levels deep: arrays, objects, or both in turn.
func nested(n int, kind string) string {
	var open, close strings.Builder
	for i := range n {
		k := kind
		if kind == "mixed" {
			k = [2]string{"array", "object"}[i%2]
		}
		if k == "array" {
			open.WriteString("[")
			close.WriteString("]")
		} else {
			open.WriteString(`{"a":`)
			close.WriteString("}")
		}
	}
	return open.String() + "1" + reverse(close.String())
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// A record nested far deeper than any writer makes (a hostile remote's)
// is a line that does not parse, read in bounded depth by every reader of
// the package: no crash, no stack the size of the line, no record.
func TestDeepRecordIsBounded(t *testing.T) {
	for _, kind := range []string{"array", "object", "mixed"} {
		deep := nested(200_000, kind)
		lines := map[string]string{
			"extra": `{"v":1,"cycle":2,"target":"deep","result":"improved","x":` + deep + `}`,
			"known": `{"v":1,"cycle":2,"gate":` + deep + `}`,
			"trace": `{"v":1,"cycle":2,"trace":{"gherkin":"g","z":` + deep + `}}`,
		}
		for where, line := range lines {
			name := kind + " in " + where
			if _, err := Parse([]byte(line)); err == nil || !strings.Contains(err.Error(), "exceeded max depth") {
				t.Errorf("%s: Parse = %v, want exceeded max depth", name, err)
			}
			if _, err := TableRecord([]byte(line)); err == nil {
				t.Errorf("%s: TableRecord reads it", name)
			}
			if _, ok := Summarize([]byte(line)); ok {
				t.Errorf("%s: Summarize reads it", name)
			}
			note := []byte(seed1 + "\n" + line + "\n" + seed3 + "\n")
			recs, bad := ParseLines(note)
			if len(recs) != 2 || len(bad) != 1 || bad[0].Line != 2 {
				t.Errorf("%s: ParseLines = %d records, %d bad lines, want the 2 others and line 2", name, len(recs), len(bad))
			}
			if got := Cycles(note); len(got) != 2 {
				t.Errorf("%s: Cycles = %v, want the 2 others'", name, got)
			}
		}
		if _, err := ParseTrace([]byte(`{"z":` + deep + `}`)); err == nil {
			t.Errorf("%s: ParseTrace reads it", kind)
		}
	}
}

// The bound is encoding/json's: a value within it is read, one past it
// is not.
func TestDepthBound(t *testing.T) {
	// the record's object is the first level
	ok := `{"v":1,"cycle":1,"x":` + nested(maxDepth-1, "array") + `}`
	if _, err := Parse([]byte(ok)); err != nil {
		t.Errorf("%d levels: %v", maxDepth, err)
	}
	over := `{"v":1,"cycle":1,"x":` + nested(maxDepth, "array") + `}`
	if _, err := Parse([]byte(over)); err == nil {
		t.Errorf("%d levels read", maxDepth+1)
	}
}
