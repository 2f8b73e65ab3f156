package ledger

import (
	"bytes"
	"testing"
)

// summaryLines are lines whose canonical status is known.
var summaryLines = []struct {
	line      string
	canonical bool
}{
	{`{"v":1,"id":"4f4ccc08ad9ce90a0a57","cycle":1,"target":"test-pass-rate","result":"improved","sha":"e2dd40c3aa6862ebbabd0b4c3bc7ac1ab1d6b6b9","canonical_sha":"e2dd40c3aa6862ebbabd0b4c3bc7ac1ab1d6b6b9","timestamp":"2026-01-02T03:04:05Z","goals_passing":18,"goals_total":23}`, true},
	{`{"v":1,"cycle":10,"target":"w","result":"harvested","goals_passing":20,"goals_total":23,"quality_score":0.85,"parallel":true,"goal_ids":["a","b","c"],"gate":"FAIL: x","trace":{"goal_hypothesis":"h","exemption_reason":"","bead_id":"ag-1","z":{"n":[1,2]}},"milestone":"m","title":"t"}`, true},
	{`{"v":1,"cycle":0}`, true},
	{`{"v":1,"cycle":1,"goal_ids":[]}`, true},
	{`{"v":1,"cycle":1,"trace":{}}`, true},
	{`{"cycle":1}`, false},                                                     // no v: Marshal adds it
	{`{"v":1, "cycle":1}`, false},                                              // whitespace
	{`{"cycle":1,"v":1}`, false},                                               // order
	{`{"v":1,"cycle":1,"target":""}`, false},                                   // empty string is omitted
	{`{"v":1,"cycle":1,"target":null}`, false},                                 // null is omitted
	{`{"v":1,"cycle":1,"parallel":false}`, false},                              // false is omitted
	{`{"v":1,"cycle":01}`, false},                                              // not JSON
	{`{"v":1,"cycle":1.0}`, false},                                             // written as 1
	{`{"v":1,"cycle":-0}`, false},                                              // negative cycle
	{`{"v":1,"cycle":1,"goals_passing":-0}`, false},                            // written as 0
	{`{"v":1,"cycle":1,"quality_score":0.50}`, false},                          // written as 0.5
	{`{"v":1,"cycle":1,"quality_score":1e+06}`, true},                          // as strconv writes it
	{`{"v":1,"cycle":1,"target":"caf\u00e9"}`, false},                          // escape
	{`{"v":1,"cycle":1,"target":"café"}`, false},                               // non-ASCII: not on the fast path
	{`{"v":1,"cycle":1,"goal_id":"x"}`, false},                                 // legacy name
	{`{"v":1,"cycle":1,"b":1,"a":2}`, false},                                   // extras out of order
	{`{"v":1,"cycle":1,"a":1,"a":2}`, false},                                   // duplicate
	{`{"v":1,"cycle":1,"trace":{"gherkin":"g","goal_hypothesis":"h"}}`, false}, // trace order
	{`{"v":1,"cycle":1,"trace":{"gherkin":null}}`, false},                      // null known trace field
	{`{"v":1,"cycle":1,"gate":null}`, false},
	{`{"v":2,"cycle":1}`, false},
	{`{"v":1,"cycle":1} `, false},
	{`{"v":1,"cycle":1,"x":[1, 2]}`, false},
}

func TestSummarize(t *testing.T) {
	for _, tt := range summaryLines {
		sum, ok := Summarize([]byte(tt.line))
		if ok != tt.canonical {
			t.Errorf("Summarize(%s) ok = %v, want %v", tt.line, ok, tt.canonical)
		}
		checkSummary(t, []byte(tt.line), sum, ok)
	}
}

// checkSummary is the contract: a line Summarize calls canonical parses,
// marshals back to itself, and has the summary of its record.
func checkSummary(t *testing.T, line []byte, sum Summary, ok bool) {
	t.Helper()
	if !ok {
		return
	}
	r, err := Parse(line)
	if err != nil {
		t.Fatalf("Summarize(%s) ok, but Parse fails: %v", line, err)
	}
	if m := r.Marshal(); !bytes.Equal(m, line) {
		t.Fatalf("Summarize(%s) ok, but Marshal gives %s", line, m)
	}
	want := SummaryOf(&r)
	if sum.Cycle != want.Cycle || !bytes.Equal(sum.ID, want.ID) || !bytes.Equal(sum.Target, want.Target) ||
		!bytes.Equal(sum.Result, want.Result) || !bytes.Equal(sum.Timestamp, want.Timestamp) {
		t.Fatalf("Summarize(%s) = %+v, want %+v", line, sum, want)
	}
}

// Every line git-evolve writes from plain ASCII values takes the fast path.
func TestSummarizeOwnLines(t *testing.T) {
	for _, tt := range summaryLines {
		r, err := Parse([]byte(tt.line))
		if err != nil {
			continue
		}
		m := r.Marshal()
		if !plainASCII(m) {
			continue
		}
		if _, ok := Summarize(m); !ok {
			t.Errorf("Summarize(Marshal(Parse(%s))) = %s is not recognised as canonical", tt.line, m)
		}
	}
}

func FuzzSummarize(f *testing.F) {
	for _, tt := range summaryLines {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		sum, ok := Summarize([]byte(line))
		checkSummary(t, []byte(line), sum, ok)
		// What Marshal writes from plain ASCII is always recognised.
		if r, err := Parse([]byte(line)); err == nil {
			if m := r.Marshal(); plainASCII(m) && !hasNullTraceField(&r) {
				if s2, ok := Summarize(m); !ok {
					t.Fatalf("Summarize(%s) (Marshal of %q) is not recognised as canonical", m, line)
				} else {
					checkSummary(t, m, s2, true)
				}
			}
		}
	})
}

// hasNullTraceField reports a known trace field kept as null among the
// trace's other fields, which the fast path leaves to Parse.
func hasNullTraceField(r *Record) bool {
	if r.Trace == nil {
		return false
	}
	for k, v := range r.Trace.Extra {
		if _, known := traceIndex[k]; known && string(v) == "null" {
			return true
		}
	}
	return false
}
