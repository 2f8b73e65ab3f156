package ledger

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// The seeds' example lines (cycle-history.jsonl), copied verbatim.
const (
	seed1 = `{"cycle": 1, "target": "test-pass-rate", "result": "improved", "sha": "abc1234", "canonical_sha": "abc1234", "goals_passing": 18, "goals_total": 23, "timestamp": "2026-02-11T21:00:00Z"}`
	seed2 = `{"cycle": 2, "target": "doc-coverage", "result": "regressed", "sha": "def5678", "canonical_sha": "def5678", "log_sha": "fedcba9", "goals_passing": 17, "goals_total": 23, "timestamp": "2026-02-11T21:30:00Z"}`
	seed3 = `{"cycle": 3, "target": "idle", "result": "unchanged", "timestamp": "2026-02-11T22:00:00Z"}`
	seed4 = `{"cycle": 4, "goal_ids": ["test-pass-rate", "doc-coverage", "lint-clean"], "result": "improved", "sha": "ghi9012", "goals_passing": 22, "goals_total": 23, "parallel": true, "timestamp": "2026-02-11T22:30:00Z"}`

	// A full trace, known fields deliberately out of schema order and mixed
	// with unknown ones.
	lineFullTrace    = `{"cycle": 6, "target": "t", "result": "improved", "sha": "a1", "canonical_sha": "a1", "goals_passing": 1, "goals_total": 2, "timestamp": "2026-02-12T00:00:00Z", "trace": {"goal_reshape": "gs", "bead_id": "b-1", "goal_hypothesis": "h", "selected_gap": "s", "gherkin": "Given x", "exemption_reason": "e", "first_failing_proof": "f", "red_evidence": "r", "green_evidence": "gr", "refactor_note": "rn", "validation_evidence": "v", "ratchet_action": "ra", "acceptance_examples": ["a"]}}`
	lineExemptOnly   = `{"cycle": 7, "target": "t", "result": "unchanged", "trace": {"exemption_reason": "docs only"}}`
	lineLegacy       = `{"cycle":5,"goal_id":"x","commit_sha":"abc"}`
	lineSecondWriter = `{"cycle":7,"mode":"evolve","result":"idle","commit":"abc1234","milestone":"m","started_at":"2026-03-01T10:00:00Z","title":"t","trace":{"gherkin":"g"}}`
	lineBothNames    = `{"cycle":10,"target":"new","goal_id":"old","sha":"s2","commit_sha":"s1","commit":"s0","timestamp":"2026-01-01T00:00:00Z","started_at":"2025-12-31T00:00:00Z"}`
	lineUnknown      = `{"cycle": 9, "zeta": {"b": [1, 2.50, {"c": null}], "a": "x"}, "alpha": 1.50, "big": 123456789012345678901234567890, "neg": -0.0, "exp": 1E+2, "list": [ "x" , true , null ]}`
	lineGateString   = `{"cycle":8,"result":"quarantined","gate":"FAIL: x"}`
	lineGateObject   = `{"cycle":8,"result":"quarantined","gate":{ "status" : "fail" }}`
	lineFloatInts    = `{"v":1.0,"cycle":12.0,"goals_passing":3.0,"goals_total":1e1,"idle_streak":0,"quality_score":1.50}`
	lineHTML         = `{"cycle":11,"target":"a<b>&c","title":"ünïcødé ✓ \u003cx\u003e","note":"<&>"}`
	// Keys are compared after unescaping, as encoding/json does.
	lineEscapedKeys = `{"\u0063ycle":1,"\u0074arget":"x","goal\u005fid":"y","commit\u005fsha":"s","m\u00e9":"\u00e9"}`
	// A later duplicate wins, as in encoding/json.
	lineDuplicateKeys = `{"cycle":1,"cycle":2,"target":"a","target":"b","x":1,"x":[2]}`
	lineNulls         = `{"cycle":13,"target":null,"goals_passing":null,"parallel":null,"trace":null,"gate":null,"v":null,"other":null}`
)

// validLines are all lines Parse must accept.
var validLines = []string{
	seed1, seed2, seed3, seed4,
	lineFullTrace, lineExemptOnly, lineLegacy, lineSecondWriter, lineBothNames,
	lineUnknown, lineGateString, lineGateObject, lineFloatInts, lineHTML, lineNulls,
	`  {"cycle":0}  `,
	`{"cycle":-0}`,
	`{"cycle":2147483647}`,
	`{"cycle":1,"id":"0123456789abcdef0123","cycle_start_sha":"c0","goal_ids":[]}`,
	`{"cycle":1,"trace":{}}`,
	`{"cycle":1,"trace":{"gherkin":"","x":{"y":[1.0]}}}`,
	lineEscapedKeys,
	lineDuplicateKeys,
	// Two legacy names for sha and no sha: one is read as sha, the other
	// is kept.
	`{"cycle":1,"commit_sha":"a","commit":"b"}`,
}

// legacyNames maps the legacy field names of docs/data-model.md to the
// current ones.
var legacyNames = map[string]string{
	"goal_id":    "target",
	"commit_sha": "sha",
	"commit":     "sha",
	"started_at": "timestamp",
}

func ip(n int) *int                { return &n }
func fp(f float64) *float64        { return &f }
func raw(s string) json.RawMessage { return json.RawMessage(s) }

func mustParse(t testing.TB, line string) Record {
	t.Helper()
	r, err := Parse([]byte(line))
	if err != nil {
		t.Fatalf("Parse(%s): %v", line, err)
	}
	return r
}

func intp(p *int) string {
	if p == nil {
		return "nil"
	}
	return strconv.Itoa(*p)
}

func TestParseSeeds(t *testing.T) {
	tests := []struct {
		line string
		want Record
	}{
		{seed1, Record{V: 1, Cycle: 1, Target: "test-pass-rate", Result: Improved, SHA: "abc1234", CanonicalSHA: "abc1234",
			GoalsPassing: ip(18), GoalsTotal: ip(23), Timestamp: "2026-02-11T21:00:00Z"}},
		{seed2, Record{V: 1, Cycle: 2, Target: "doc-coverage", Result: Regressed, SHA: "def5678", CanonicalSHA: "def5678",
			LogSHA: "fedcba9", GoalsPassing: ip(17), GoalsTotal: ip(23), Timestamp: "2026-02-11T21:30:00Z"}},
		{seed3, Record{V: 1, Cycle: 3, Target: "idle", Result: Unchanged, Timestamp: "2026-02-11T22:00:00Z"}},
		{seed4, Record{V: 1, Cycle: 4, GoalIDs: []string{"test-pass-rate", "doc-coverage", "lint-clean"}, Result: Improved,
			SHA: "ghi9012", GoalsPassing: ip(22), GoalsTotal: ip(23), Parallel: true, Timestamp: "2026-02-11T22:30:00Z"}},
		{lineExemptOnly, Record{V: 1, Cycle: 7, Target: "t", Result: Unchanged,
			Trace: &Trace{Fields: map[string]string{"exemption_reason": "docs only"}}}},
		// Legacy names are read as the current ones and kept as written.
		{lineLegacy, Record{V: 1, Cycle: 5, Target: "x", SHA: "abc",
			Extra: map[string]json.RawMessage{"goal_id": raw(`"x"`), "commit_sha": raw(`"abc"`)}}},
		{lineSecondWriter, Record{V: 1, Cycle: 7, Result: "idle", SHA: "abc1234", Timestamp: "2026-03-01T10:00:00Z",
			Trace: &Trace{Fields: map[string]string{"gherkin": "g"}},
			Extra: map[string]json.RawMessage{"mode": raw(`"evolve"`), "milestone": raw(`"m"`), "title": raw(`"t"`),
				"commit": raw(`"abc1234"`), "started_at": raw(`"2026-03-01T10:00:00Z"`)}}},
		// Both legacy and current names: the current one wins, the legacy
		// one is kept as an unknown field.
		{lineBothNames, Record{V: 1, Cycle: 10, Target: "new", SHA: "s2", Timestamp: "2026-01-01T00:00:00Z",
			Extra: map[string]json.RawMessage{"goal_id": raw(`"old"`), "commit_sha": raw(`"s1"`), "commit": raw(`"s0"`),
				"started_at": raw(`"2025-12-31T00:00:00Z"`)}}},
		// Unknown values are kept byte-exact after compaction: 2.50, 1.50,
		// -0.0, 1E+2 and big integers are not normalised, key order inside
		// unknown objects is kept.
		{lineUnknown, Record{V: 1, Cycle: 9, Extra: map[string]json.RawMessage{
			"zeta": raw(`{"b":[1,2.50,{"c":null}],"a":"x"}`), "alpha": raw(`1.50`),
			"big": raw(`123456789012345678901234567890`), "neg": raw(`-0.0`), "exp": raw(`1E+2`),
			"list": raw(`["x",true,null]`)}}},
		{lineGateString, Record{V: 1, Cycle: 8, Result: Quarantined, Gate: raw(`"FAIL: x"`)}},
		{lineGateObject, Record{V: 1, Cycle: 8, Result: Quarantined, Gate: raw(`{"status":"fail"}`)}},
		// Integral numbers written as floats are integers.
		{lineFloatInts, Record{V: 1, Cycle: 12, GoalsPassing: ip(3), GoalsTotal: ip(10), IdleStreak: ip(0), QualityScore: fp(1.5)}},
		// Unicode and HTML characters are plain data.
		{lineHTML, Record{V: 1, Cycle: 11, Target: "a<b>&c", Extra: map[string]json.RawMessage{
			"title": raw(`"ünïcødé ✓ \u003cx\u003e"`), "note": raw(`"<&>"`)}}},
		// null is absent for known fields (so v defaults to 1) and kept as
		// written, as it is for unknown ones.
		{lineNulls, Record{V: 1, Cycle: 13, Extra: map[string]json.RawMessage{"other": raw(`null`),
			"target": raw(`null`), "goals_passing": raw(`null`), "parallel": raw(`null`), "trace": raw(`null`), "gate": raw(`null`)}}},
		{lineEscapedKeys, Record{V: 1, Cycle: 1, Target: "x", SHA: "s", Extra: map[string]json.RawMessage{
			"goal_id": raw(`"y"`), "commit_sha": raw(`"s"`), "mé": raw(`"\u00e9"`)}}},
		{lineDuplicateKeys, Record{V: 1, Cycle: 2, Target: "b", Extra: map[string]json.RawMessage{"x": raw(`[2]`)}}},
		{`  {"cycle":0}  `, Record{V: 1, Cycle: 0}},
		{`{"cycle":-0}`, Record{V: 1, Cycle: 0}},
		{`{"cycle":2147483647}`, Record{V: 1, Cycle: 2147483647}},
		{`{"cycle":1,"id":"0123456789abcdef0123","cycle_start_sha":"c0","goal_ids":[]}`,
			Record{V: 1, Cycle: 1, ID: "0123456789abcdef0123", CycleStartSHA: "c0", GoalIDs: []string{}}},
		{`{"cycle":1,"trace":{}}`, Record{V: 1, Cycle: 1, Trace: &Trace{Fields: map[string]string{}}}},
	}
	for _, tt := range tests {
		got := mustParse(t, tt.line)
		if !recordsEqual(&got, &tt.want) {
			t.Errorf("Parse(%s)\n got  %s\n want %s", tt.line, describe(&got), describe(&tt.want))
		}
	}
}

// recordsEqual compares records by meaning: pointers by their values, raw
// JSON bytes exactly, empty trace maps like nil ones.
func recordsEqual(a, b *Record) bool {
	return describe(a) == describe(b)
}

func describe(r *Record) string {
	var s strings.Builder
	fmt.Fprintf(&s, "V=%d ID=%q Cycle=%d Target=%q Result=%q SHA=%q CanonicalSHA=%q LogSHA=%q CycleStartSHA=%q Timestamp=%q ",
		r.V, r.ID, r.Cycle, r.Target, r.Result, r.SHA, r.CanonicalSHA, r.LogSHA, r.CycleStartSHA, r.Timestamp)
	fmt.Fprintf(&s, "GoalsPassing=%s GoalsTotal=%s IdleStreak=%s ", intp(r.GoalsPassing), intp(r.GoalsTotal), intp(r.IdleStreak))
	if r.QualityScore == nil {
		s.WriteString("QualityScore=nil ")
	} else {
		fmt.Fprintf(&s, "QualityScore=%v ", *r.QualityScore)
	}
	fmt.Fprintf(&s, "Parallel=%v GoalIDs=%#v Gate=%q ", r.Parallel, r.GoalIDs, string(r.Gate))
	if r.Trace == nil {
		s.WriteString("Trace=nil ")
	} else {
		fmt.Fprintf(&s, "Trace={Fields=%s Extra=%s} ", sortedMap(r.Trace.Fields), sortedRaw(r.Trace.Extra))
	}
	fmt.Fprintf(&s, "Extra=%s", sortedRaw(r.Extra))
	return s.String()
}

func sortedMap(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%q:%q", k, m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func sortedRaw(m map[string]json.RawMessage) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%q:%s", k, m[k]))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func TestParseFullTrace(t *testing.T) {
	r := mustParse(t, lineFullTrace)
	if r.Trace == nil {
		t.Fatal("trace is nil")
	}
	want := map[string]string{
		"goal_hypothesis": "h", "selected_gap": "s", "gherkin": "Given x", "exemption_reason": "e",
		"first_failing_proof": "f", "red_evidence": "r", "green_evidence": "gr", "refactor_note": "rn",
		"validation_evidence": "v", "ratchet_action": "ra", "goal_reshape": "gs",
	}
	if len(want) != 11 {
		t.Fatal("test table must list the 11 known trace fields")
	}
	if !reflect.DeepEqual(r.Trace.Fields, want) {
		t.Errorf("trace fields = %v, want %v", r.Trace.Fields, want)
	}
	wantExtra := map[string]json.RawMessage{"bead_id": raw(`"b-1"`), "acceptance_examples": raw(`["a"]`)}
	if sortedRaw(r.Trace.Extra) != sortedRaw(wantExtra) {
		t.Errorf("trace extra = %s, want %s", sortedRaw(r.Trace.Extra), sortedRaw(wantExtra))
	}
	if r.Extra != nil {
		t.Errorf("trace fields leaked to the record: %s", sortedRaw(r.Extra))
	}
	// Trace.Marshal is the trace's part of the record's canonical form.
	var top map[string]json.RawMessage
	if err := json.Unmarshal(r.Marshal(), &top); err != nil {
		t.Fatal(err)
	}
	if got := r.Trace.Marshal(); !bytes.Equal(got, top["trace"]) {
		t.Errorf("Trace.Marshal = %s, want %s", got, top["trace"])
	}
	if got := (&Trace{}).Marshal(); string(got) != "{}" {
		t.Errorf("empty Trace.Marshal = %s, want {}", got)
	}
}

// Every trace field the data model names is a known, string-typed field.
func TestParseTraceFieldsFromDoc(t *testing.T) {
	_, traceFields := docFieldOrder(t)
	if len(traceFields) != 11 {
		t.Fatalf("doc lists %d trace fields, want 11: %v", len(traceFields), traceFields)
	}
	for _, f := range traceFields {
		r := mustParse(t, fmt.Sprintf(`{"cycle":1,"trace":{%q:"x"}}`, f))
		if got := r.Trace.Fields[f]; got != "x" || len(r.Trace.Extra) != 0 {
			t.Errorf("trace field %s: Fields=%v Extra=%s, want it known", f, r.Trace.Fields, sortedRaw(r.Trace.Extra))
		}
		_, err := Parse([]byte(fmt.Sprintf(`{"cycle":1,"trace":{%q:3}}`, f)))
		wantFieldError(t, fmt.Sprintf("trace %s:3", f), err, "trace."+f)
	}
}

func TestGateText(t *testing.T) {
	tests := []struct{ line, want string }{
		{lineGateString, "FAIL: x"},
		{`{"cycle":1,"gate":"PASS"}`, "PASS"},
		{lineGateObject, `{"status":"fail"}`},
		{`{"cycle":1}`, ""},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.line)
		if got := r.GateText(); got != tt.want {
			t.Errorf("GateText(%s) = %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestTargetUnmoved(t *testing.T) {
	const b = `"before":{"goals_passing":1,"goals_total":3,"score":40}`
	tests := []struct {
		line string
		want bool
	}{
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":"fail","target_before":"fail"}`, true},
		{`{"cycle":1,"result":"improved",` + b + `,"score":30,"target_after":"fail","target_before":"fail"}`, true},
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":"timeout","target_before":"fail"}`, true},
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":"pass","target_before":"pass"}`, true},
		// the score rose: not unmoved, whatever the target did
		{`{"cycle":1,"result":"improved",` + b + `,"score":40.5,"target_after":"fail","target_before":"fail"}`, false},
		// the target moved
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":"pass","target_before":"fail"}`, false},
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":"fail","target_before":"pass"}`, false},
		// not improved, or not saying
		{`{"cycle":1,"result":"regressed",` + b + `,"score":40,"target_after":"fail","target_before":"fail"}`, false},
		{`{"cycle":1,"result":"improved",` + b + `,"score":40}`, false},
		{`{"cycle":1,"result":"improved",` + b + `,"target_after":"fail","target_before":"fail"}`, false},
		{`{"cycle":1,"result":"improved","score":40,"target_after":"fail","target_before":"fail"}`, false},
		{`{"cycle":1,"result":"improved","before":{"score":"x"},"score":40,"target_after":"fail","target_before":"fail"}`, false},
		{`{"cycle":1,"result":"improved",` + b + `,"score":40,"target_after":1,"target_before":1}`, false},
	}
	for _, tt := range tests {
		r := mustParse(t, tt.line)
		if got := r.TargetUnmoved(); got != tt.want {
			t.Errorf("TargetUnmoved(%s) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestCommit(t *testing.T) {
	tests := []struct {
		r    Record
		want string
	}{
		{Record{SHA: "a", CanonicalSHA: "b"}, "b"},
		{Record{SHA: "a"}, "a"},
		{Record{CanonicalSHA: "b"}, "b"},
		{Record{}, ""},
	}
	for _, tt := range tests {
		if got := tt.r.Commit(); got != tt.want {
			t.Errorf("Commit(sha=%q canonical=%q) = %q, want %q", tt.r.SHA, tt.r.CanonicalSHA, got, tt.want)
		}
	}
}

func TestResults(t *testing.T) {
	want := []string{"improved", "regressed", "unchanged", "harvested", "quarantined", "context-handoff"}
	if !reflect.DeepEqual(Results, want) {
		t.Errorf("Results = %v, want %v", Results, want)
	}
	for _, r := range want {
		if !ValidResult(r) {
			t.Errorf("ValidResult(%q) = false", r)
		}
	}
	for _, r := range []string{"", "idle", "Improved", "improved "} {
		if ValidResult(r) {
			t.Errorf("ValidResult(%q) = true", r)
		}
	}
	productive := map[string]bool{"improved": true, "regressed": true, "harvested": true}
	for _, r := range append(want, "idle", "") {
		if Productive(r) != productive[r] {
			t.Errorf("Productive(%q) = %v, want %v", r, !productive[r], productive[r])
		}
	}
}

func wantFieldError(t *testing.T, name string, err error, field string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: no error, want a *FieldError on %q", name, field)
		return
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		t.Errorf("%s: error %v (%T) is not a *FieldError", name, err, err)
		return
	}
	ok := false
	for _, f := range strings.Split(field, "|") {
		ok = ok || fe.Field == f
	}
	if !ok {
		t.Errorf("%s: error %q names field %q, want %q", name, err, fe.Field, field)
	}
	if fe.Reason == "" {
		t.Errorf("%s: error has no reason", name)
	}
	if fe.Field != "" && !strings.Contains(err.Error(), fe.Field) {
		t.Errorf("%s: message %q does not name the field %q", name, err, fe.Field)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, line, field string
		bug               string // non-empty: a known bug, skipped while it shows
	}{
		{"not JSON", `not json`, "", ""},
		{"empty", ``, "", ""},
		{"JSON array", `[{"cycle":1}]`, "", ""},
		{"JSON null", `null`, "", ""},
		{"JSON string", `"cycle"`, "", ""},
		{"JSON number", `1`, "", ""},
		{"truncated", `{"cycle":1`, "", ""},
		{"two objects", `{"cycle":1}{"cycle":2}`, "", ""},
		{"two objects spaced", `{"cycle":1} {"cycle":2}`, "", ""},
		{"trailing garbage", `{"cycle":1} x`, "", ""},
		{"trailing ]", `{"cycle":1}]`, "", "Parse accepts a line with a stray ] after the object"},
		{"trailing }", `{"cycle":1}}`, "", "Parse accepts a line with a stray } after the object"},
		{"missing cycle", `{"target":"x","result":"improved"}`, "cycle", ""},
		{"null cycle", `{"cycle":null}`, "cycle", ""},
		{"string cycle", `{"cycle":"3"}`, "cycle", ""},
		{"bool cycle", `{"cycle":true}`, "cycle", ""},
		{"negative cycle", `{"cycle":-1}`, "cycle", ""},
		{"fractional cycle", `{"cycle":1.5}`, "cycle", ""},
		{"huge cycle", `{"cycle":99999999999}`, "cycle", ""},
		{"huge float cycle", `{"cycle":1e300}`, "cycle", ""},
		{"tiny cycle", `{"cycle":1e-400}`, "cycle", "Parse accepts cycle 1e-400 (not an integer) as cycle 0"},
		{"goals_passing string", `{"cycle":1,"goals_passing":"x"}`, "goals_passing", ""},
		{"goals_total fraction", `{"cycle":1,"goals_total":1.5}`, "goals_total", ""},
		{"idle_streak string", `{"cycle":1,"idle_streak":"2"}`, "idle_streak", ""},
		{"quality_score string", `{"cycle":1,"quality_score":"high"}`, "quality_score", ""},
		{"quality_score numeric string", `{"cycle":1,"quality_score":"0.5"}`, "quality_score", ""},
		{"quality_score overflow", `{"cycle":1,"quality_score":1e999}`, "quality_score", ""},
		{"parallel string", `{"cycle":1,"parallel":"yes"}`, "parallel", ""},
		{"parallel number", `{"cycle":1,"parallel":1}`, "parallel", ""},
		{"goal_ids numbers", `{"cycle":1,"goal_ids":[1]}`, "goal_ids", ""},
		{"goal_ids string", `{"cycle":1,"goal_ids":"a"}`, "goal_ids", ""},
		{"goal_ids null element", `{"cycle":1,"goal_ids":["a",null]}`, "goal_ids", `Parse accepts goal_ids ["a",null] and reads the null as ""`},
		{"target number", `{"cycle":1,"target":5}`, "target", ""},
		{"sha array", `{"cycle":1,"sha":["a"]}`, "sha", ""},
		{"id number", `{"cycle":1,"id":1}`, "id", ""},
		{"timestamp object", `{"cycle":1,"timestamp":{}}`, "timestamp", ""},
		{"legacy goal_id number", `{"cycle":1,"goal_id":5}`, "goal_id|target", ""},
		{"trace string", `{"cycle":1,"trace":"str"}`, "trace", ""},
		{"trace array", `{"cycle":1,"trace":[]}`, "trace", ""},
		{"trace known field not a string", `{"cycle":1,"trace":{"gherkin":3}}`, "trace.gherkin", ""},
		{"trace known field object", `{"cycle":1,"trace":{"red_evidence":{"a":1}}}`, "trace.red_evidence", ""},
		{"v newer", `{"v":2,"cycle":1}`, "v", ""},
		{"v newer, otherwise unreadable", `{"v":2,"cycle":"x","trace":7}`, "v", ""},
		{"v zero", `{"v":0,"cycle":1}`, "v", ""},
		{"v string", `{"v":"1","cycle":1}`, "v", ""},
		{"v fraction", `{"v":1.5,"cycle":1}`, "v", ""},
	}
	for _, tt := range tests {
		r, err := Parse([]byte(tt.line))
		if tt.bug != "" && err == nil {
			t.Run(tt.name, func(t *testing.T) {
				t.Fatalf("fixed bug is back: %s: Parse(%s) = %s, nil; want a *FieldError on %q", tt.bug, tt.line, r.Marshal(), tt.field)
			})
			continue
		}
		wantFieldError(t, fmt.Sprintf("%s: Parse(%s)", tt.name, tt.line), err, tt.field)
	}
}

// The newer-version error says what is newer than what.
func TestParseNewerVersionMessage(t *testing.T) {
	_, err := Parse([]byte(`{"v":3,"cycle":1}`))
	if err == nil || !strings.Contains(err.Error(), "3") || !strings.Contains(err.Error(), strconv.Itoa(SchemaMajor)) {
		t.Errorf("Parse(v 3) error = %v, want it to name version 3 and %d", err, SchemaMajor)
	}
}

// Parse must give the same answer every time for the same line.
func TestParseDeterministic(t *testing.T) {
	for _, line := range []string{
		lineBothNames,
		// Two legacy names for sha and no sha: which one becomes sha must
		// not depend on map iteration order.
		`{"cycle":1,"commit_sha":"a","commit":"b"}`,
		`{"cycle":1,"commit_sha":5,"commit":"b"}`,
	} {
		outcomes := map[string]int{}
		for i := 0; i < 200; i++ {
			r, err := Parse([]byte(line))
			outcomes[fmt.Sprintf("%s %v", r.Marshal(), err)]++
		}
		if len(outcomes) > 1 {
			if hasAmbiguousLegacySHA([]byte(line)) {
				t.Run(line, func(t *testing.T) {
					t.Fatalf("fixed bug is back: Parse(%s) is nondeterministic when both commit_sha and commit are present without sha: outcomes %v", line, outcomes)
				})
				continue
			}
			t.Errorf("Parse(%s) is nondeterministic: %v", line, outcomes)
		}
	}
}

// hasAmbiguousLegacySHA reports whether line holds both legacy names for
// sha (commit_sha and commit) but no sha: the known nondeterminism bug.
func hasAmbiguousLegacySHA(line []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	_, a := m["commit_sha"]
	_, b := m["commit"]
	_, s := m["sha"]
	return a && b && !s
}

// shadowedLegacy reports the known write/read asymmetry: r keeps a legacy
// field as unknown (because its current name was present when read) while
// the current field is empty, so Marshal omits the current field and the
// next Parse promotes the legacy one.
func shadowedLegacy(r *Record) string {
	cur := map[string]string{"target": r.Target, "sha": r.SHA, "timestamp": r.Timestamp}
	for old, c := range legacyNames {
		if _, ok := r.Extra[old]; ok && cur[c] == "" {
			return fmt.Sprintf("legacy field %q is kept as unknown but %q is empty, so re-reading the canonical form promotes it", old, c)
		}
	}
	return ""
}

// docFieldOrder reads the record fields and the trace fields, in order, from
// the table in docs/data-model.md ("The record").
func docFieldOrder(t *testing.T) (fields, trace []string) {
	t.Helper()
	doc, err := os.ReadFile("../docs/data-model.md")
	if err != nil {
		t.Fatalf("reading the data model: %v", err)
	}
	s := string(doc)
	i := strings.Index(s, "## The record")
	if i < 0 {
		t.Fatal("no \"## The record\" section in docs/data-model.md")
	}
	s = s[i:]
	if j := strings.Index(s[1:], "\n## "); j >= 0 {
		s = s[:j+1]
	}
	tick := regexp.MustCompile("`([a-z_]+)`")
	for _, row := range strings.Split(s, "\n") {
		if !strings.HasPrefix(row, "| `") {
			continue
		}
		cells := strings.Split(row, "|")
		for _, m := range tick.FindAllStringSubmatch(cells[1], -1) {
			fields = append(fields, m[1])
			if m[1] == "trace" {
				for _, tm := range tick.FindAllStringSubmatch(cells[3], -1) {
					trace = append(trace, tm[1])
				}
			}
		}
	}
	if len(fields) < 18 {
		t.Fatalf("read %d fields from the data model table: %v", len(fields), fields)
	}
	return fields, trace
}

// objectKeys returns the keys of a JSON object in the order written.
func objectKeys(t *testing.T, data []byte) []string {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("%s is not an object", data)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

// The canonical form writes the known fields in the order of the data
// model's table, then unknown fields sorted by name; the same for traces.
func TestMarshalFieldOrderMatchesDoc(t *testing.T) {
	fields, traceFields := docFieldOrder(t)
	r := Record{V: 1, ID: "i", Cycle: 1, Target: "t", Result: Improved, SHA: "s", CanonicalSHA: "c", LogSHA: "l",
		CycleStartSHA: "cs", Timestamp: "ts", GoalsPassing: ip(1), GoalsTotal: ip(2), QualityScore: fp(0.5),
		IdleStreak: ip(3), Parallel: true, GoalIDs: []string{"g"}, Gate: raw(`"PASS"`),
		Trace: &Trace{Fields: map[string]string{}, Extra: map[string]json.RawMessage{"zz": raw(`1`), "aa": raw(`2`)}},
		Extra: map[string]json.RawMessage{"zulu": raw(`1`), "alpha": raw(`2`), "Mike": raw(`3`)}}
	for _, f := range traceFields {
		r.Trace.Fields[f] = f
	}
	want := append(append([]string{}, fields...), "Mike", "alpha", "zulu")
	out := r.Marshal()
	if got := objectKeys(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("Marshal keys = %v\nwant (doc order) %v", got, want)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(out, &top); err != nil {
		t.Fatal(err)
	}
	wantTrace := append(append([]string{}, traceFields...), "aa", "zz")
	if got := objectKeys(t, top["trace"]); !reflect.DeepEqual(got, wantTrace) {
		t.Errorf("trace keys = %v\nwant (doc order) %v", got, wantTrace)
	}
}

func TestMarshalGolden(t *testing.T) {
	tests := []struct {
		name string
		r    Record
		want string
	}{
		{"seed 1", mustParse(t, seed1),
			`{"v":1,"cycle":1,"target":"test-pass-rate","result":"improved","sha":"abc1234","canonical_sha":"abc1234","timestamp":"2026-02-11T21:00:00Z","goals_passing":18,"goals_total":23}`},
		{"seed 2", mustParse(t, seed2),
			`{"v":1,"cycle":2,"target":"doc-coverage","result":"regressed","sha":"def5678","canonical_sha":"def5678","log_sha":"fedcba9","timestamp":"2026-02-11T21:30:00Z","goals_passing":17,"goals_total":23}`},
		{"seed 3", mustParse(t, seed3),
			`{"v":1,"cycle":3,"target":"idle","result":"unchanged","timestamp":"2026-02-11T22:00:00Z"}`},
		{"seed 4", mustParse(t, seed4),
			`{"v":1,"cycle":4,"result":"improved","sha":"ghi9012","timestamp":"2026-02-11T22:30:00Z","goals_passing":22,"goals_total":23,"parallel":true,"goal_ids":["test-pass-rate","doc-coverage","lint-clean"]}`},
		{"full trace", mustParse(t, lineFullTrace),
			`{"v":1,"cycle":6,"target":"t","result":"improved","sha":"a1","canonical_sha":"a1","timestamp":"2026-02-12T00:00:00Z","goals_passing":1,"goals_total":2,"trace":{"goal_hypothesis":"h","selected_gap":"s","gherkin":"Given x","exemption_reason":"e","first_failing_proof":"f","red_evidence":"r","green_evidence":"gr","refactor_note":"rn","validation_evidence":"v","ratchet_action":"ra","goal_reshape":"gs","acceptance_examples":["a"],"bead_id":"b-1"}}`},
		{"legacy", mustParse(t, lineLegacy), `{"v":1,"cycle":5,"target":"x","sha":"abc","commit_sha":"abc","goal_id":"x"}`},
		{"second writer", mustParse(t, lineSecondWriter),
			`{"v":1,"cycle":7,"result":"idle","sha":"abc1234","timestamp":"2026-03-01T10:00:00Z","trace":{"gherkin":"g"},"commit":"abc1234","milestone":"m","mode":"evolve","started_at":"2026-03-01T10:00:00Z","title":"t"}`},
		{"both names", mustParse(t, lineBothNames),
			`{"v":1,"cycle":10,"target":"new","sha":"s2","timestamp":"2026-01-01T00:00:00Z","commit":"s0","commit_sha":"s1","goal_id":"old","started_at":"2025-12-31T00:00:00Z"}`},
		{"unknown kept", mustParse(t, lineUnknown),
			`{"v":1,"cycle":9,"alpha":1.50,"big":123456789012345678901234567890,"exp":1E+2,"list":["x",true,null],"neg":-0.0,"zeta":{"b":[1,2.50,{"c":null}],"a":"x"}}`},
		{"gate string", mustParse(t, lineGateString), `{"v":1,"cycle":8,"result":"quarantined","gate":"FAIL: x"}`},
		{"gate object", mustParse(t, lineGateObject), `{"v":1,"cycle":8,"result":"quarantined","gate":{"status":"fail"}}`},
		{"float ints", mustParse(t, lineFloatInts), `{"v":1,"cycle":12,"goals_passing":3,"goals_total":10,"quality_score":1.5,"idle_streak":0}`},
		{"nulls", mustParse(t, lineNulls), `{"v":1,"cycle":13,"gate":null,"goals_passing":null,"other":null,"parallel":null,"target":null,"trace":null}`},
		{"built, zero counts are written", Record{V: 1, ID: "0123456789abcdef0123", Cycle: 9, Result: Harvested,
			CanonicalSHA: "c", CycleStartSHA: "s", GoalsPassing: ip(0), GoalsTotal: ip(0), QualityScore: fp(0), IdleStreak: ip(0),
			GoalIDs: []string{}},
			`{"v":1,"id":"0123456789abcdef0123","cycle":9,"result":"harvested","canonical_sha":"c","cycle_start_sha":"s","goals_passing":0,"goals_total":0,"quality_score":0,"idle_streak":0,"goal_ids":[]}`},
		{"built, HTML and unicode", Record{V: 1, Cycle: 2, Target: "a<b>&c", Result: "ünïcødé ✓", GoalIDs: []string{"<x>", "y&z"},
			Trace: &Trace{Fields: map[string]string{"gherkin": "Given <a> & \"b\""}}},
			`{"v":1,"cycle":2,"target":"a<b>&c","result":"ünïcødé ✓","goal_ids":["<x>","y&z"],"trace":{"gherkin":"Given <a> & \"b\""}}`},
		{"built, quality score", Record{V: 1, Cycle: 3, QualityScore: fp(0.1)}, `{"v":1,"cycle":3,"quality_score":0.1}`},
		{"built, empty trace", Record{V: 1, Cycle: 3, Trace: &Trace{}}, `{"v":1,"cycle":3,"trace":{}}`},
	}
	for _, tt := range tests {
		got := tt.r.Marshal()
		if string(got) != tt.want {
			t.Errorf("%s: Marshal\n got  %s\n want %s", tt.name, got, tt.want)
		}
		if !json.Valid(got) || bytes.ContainsAny(got, "\n\r") {
			t.Errorf("%s: Marshal %q is not one line of JSON", tt.name, got)
		}
	}
}

func TestMarshalNoHTMLEscape(t *testing.T) {
	r := mustParse(t, lineHTML)
	out := string(r.Marshal())
	for _, s := range []string{`"target":"a<b>&c"`, `"note":"<&>"`} {
		if !strings.Contains(out, s) {
			t.Errorf("Marshal = %s, want it to contain %s", out, s)
		}
	}
	for _, s := range []string{`\u003c`, `\u003e`, `\u0026`} {
		if strings.Contains(strings.ReplaceAll(out, `ünïcødé ✓ \u003cx\u003e`, ""), s) {
			t.Errorf("Marshal = %s escapes HTML (%s)", out, s)
		}
	}
	built := Record{V: 1, Cycle: 1, Target: "é✓<>&", GoalIDs: []string{"<&>"}}
	if got, want := string(built.Marshal()), `{"v":1,"cycle":1,"target":"é✓<>&","goal_ids":["<&>"]}`; got != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
}

// Marshal(Parse(Marshal(x))) == Marshal(x) for every valid line, and for
// records built in code.
func TestMarshalIdempotent(t *testing.T) {
	lines := append([]string{}, validLines...)
	lines = append(lines,
		// The current name is present but empty or null, the legacy one
		// is kept as unknown: the canonical form must still be stable.
		`{"cycle":1,"target":"","goal_id":"b"}`,
		`{"cycle":1,"target":null,"goal_id":"b"}`,
		`{"cycle":1,"sha":null,"commit":"x"}`,
		`{"cycle":1,"timestamp":"","started_at":"2026-01-01T00:00:00Z"}`,
	)
	for _, line := range lines {
		r := mustParse(t, line)
		m1 := r.Marshal()
		r2, err := Parse(m1)
		if err != nil {
			t.Errorf("Parse(Marshal(Parse(%s))) = %v", line, err)
			continue
		}
		m2 := r2.Marshal()
		if !bytes.Equal(m1, m2) {
			if why := shadowedLegacy(&r); why != "" {
				t.Run(line, func(t *testing.T) {
					t.Fatalf("fixed bug is back: %s: Marshal(Parse(%s)) = %s, re-marshals to %s", why, line, m1, m2)
				})
				continue
			}
			t.Errorf("canonical form of %s is not stable:\n first  %s\n second %s", line, m1, m2)
		}
		if !recordsEqual(&r, &r2) {
			t.Errorf("Parse(Marshal(r)) != r for %s:\n got  %s\n want %s", line, describe(&r2), describe(&r))
		}
	}
}

// decodeObject decodes a JSON object keeping numbers as written.
func decodeObject(data []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// knownNumeric are the fields Parse reads as numbers and writes normalised.
var knownNumeric = map[string]bool{"v": true, "cycle": true, "goals_passing": true, "goals_total": true,
	"idle_streak": true, "quality_score": true}

// checkLossless checks that every field of in appears in out with an equal
// JSON value, legacy names read as current ones; that out has no field in
// lacks (other than v); and that unknown values are byte-identical.
func checkLossless(in, out []byte) error {
	im, err := decodeObject(in)
	if err != nil {
		return fmt.Errorf("input: %v", err)
	}
	om, err := decodeObject(out)
	if err != nil {
		return fmt.Errorf("output: %v", err)
	}
	// A legacy name with a value fills its current name when that is
	// missing, null or "" (the first such legacy name, in the schema's
	// order); every field of the input is also kept as written.
	absentVal := func(v any, has bool) bool { return !has || v == nil || v == "" }
	filled := map[string]any{}
	for _, lf := range []struct{ name, current string }{
		{"goal_id", "target"}, {"commit_sha", "sha"}, {"commit", "sha"}, {"started_at", "timestamp"}} {
		v, has := im[lf.name]
		if absentVal(v, has) {
			continue
		}
		if cv, has := im[lf.current]; !absentVal(cv, has) {
			continue
		}
		if _, done := filled[lf.current]; !done {
			filled[lf.current] = v
		}
	}
	same := func(name string, a, b any) bool {
		if knownNumeric[name] && a != nil && b != nil {
			an, _ := a.(json.Number)
			bn, _ := b.(json.Number)
			x, xerr := strconv.ParseFloat(string(an), 64)
			y, yerr := strconv.ParseFloat(string(bn), 64)
			return xerr == nil && yerr == nil && x == y
		}
		return reflect.DeepEqual(a, b)
	}
	for cur, v := range filled {
		if !same(cur, om[cur], v) {
			return fmt.Errorf("field %q: %#v, want the legacy value %#v", cur, om[cur], v)
		}
	}
	for k, v := range im {
		if _, f := filled[k]; f {
			continue // an absent current value a legacy field filled
		}
		if k == "v" && v == nil {
			continue // v defaults to 1
		}
		ov, ok := om[k]
		if !ok {
			return fmt.Errorf("field %q (%v) is lost", k, v)
		}
		if !same(k, v, ov) {
			return fmt.Errorf("field %q: %#v became %#v", k, v, ov)
		}
	}
	for k := range om {
		if _, ok := im[k]; !ok && k != "v" {
			if _, f := filled[k]; !f {
				return fmt.Errorf("field %q appeared from nowhere", k)
			}
		}
	}
	return nil
}

func TestRoundTripLossless(t *testing.T) {
	for _, line := range validLines {
		r := mustParse(t, line)
		out := r.Marshal()
		if err := checkLossless([]byte(line), out); err != nil {
			t.Errorf("Parse→Marshal of %s\n gives %s\n %v", line, out, err)
		}
	}
	// The check itself must catch a lost or changed field.
	if checkLossless([]byte(`{"cycle":1,"x":1.50}`), []byte(`{"v":1,"cycle":1,"x":1.5}`)) == nil {
		t.Error("checkLossless accepts 1.50 → 1.5 for an unknown field")
	}
	if checkLossless([]byte(`{"cycle":1,"x":1}`), []byte(`{"v":1,"cycle":1}`)) == nil {
		t.Error("checkLossless accepts a lost field")
	}
	if checkLossless([]byte(`{"cycle":1,"goal_id":"a"}`), []byte(`{"v":1,"cycle":1,"target":"b"}`)) == nil {
		t.Error("checkLossless accepts a changed legacy field")
	}
	if checkLossless([]byte(`{"cycle":1,"commit":"a","commit_sha":"b"}`), []byte(`{"v":1,"cycle":1,"sha":"a"}`)) == nil {
		t.Error("checkLossless accepts a lost second legacy field")
	}
	// commit_sha comes before commit: it fills sha, and both are kept.
	if err := checkLossless([]byte(`{"cycle":1,"commit":"a","commit_sha":"b"}`), []byte(`{"v":1,"cycle":1,"sha":"b","commit":"a","commit_sha":"b"}`)); err != nil {
		t.Errorf("checkLossless rejects the legacy order: %v", err)
	}
	if checkLossless([]byte(`{"cycle":1,"commit":"a","commit_sha":"b"}`), []byte(`{"v":1,"cycle":1,"sha":"a","commit":"a","commit_sha":"b"}`)) == nil {
		t.Error("checkLossless accepts commit over commit_sha")
	}
}

func TestRoundTripGoalIDsNull(t *testing.T) {
	line := `{"cycle":1,"goal_ids":["a",null]}`
	r, err := Parse([]byte(line))
	if err != nil {
		return // rejecting it is fine too
	}
	if lerr := checkLossless([]byte(line), r.Marshal()); lerr != nil {
		t.Fatalf("fixed bug is back: Parse(%s) reads a null goal id as \"\": %v", line, lerr)
	}
}

func TestValidate(t *testing.T) {
	productive := func(result string) Record {
		return Record{V: 1, Cycle: 3, Result: result, CanonicalSHA: "c", GoalsPassing: ip(1), GoalsTotal: ip(2)}
	}
	with := func(r Record, f func(*Record)) Record { f(&r); return r }
	tests := []struct {
		name  string
		r     Record
		field string // "" means valid
	}{
		{"seed 1", mustParse(t, seed1), ""},
		{"seed 2", mustParse(t, seed2), ""},
		{"seed 3", mustParse(t, seed3), ""},
		{"seed 4 (sha, no canonical_sha)", mustParse(t, seed4), ""},
		{"full trace", mustParse(t, lineFullTrace), ""},
		{"improved", productive(Improved), ""},
		{"regressed", productive(Regressed), ""},
		{"harvested", productive(Harvested), ""},
		{"passing == total", with(productive(Improved), func(r *Record) { r.GoalsPassing = ip(2) }), ""},
		{"zero goals", with(productive(Improved), func(r *Record) { r.GoalsPassing, r.GoalsTotal = ip(0), ip(0) }), ""},
		{"quarantined without sha", Record{Cycle: 1, Result: Quarantined}, ""},
		{"unchanged without sha", Record{Cycle: 1, Result: Unchanged}, ""},
		{"unchanged with counts", Record{Cycle: 1, Result: Unchanged, GoalsPassing: ip(2), GoalsTotal: ip(2)}, ""},
		{"idle streak zero", Record{Cycle: 1, Result: Unchanged, IdleStreak: ip(0)}, ""},
		{"empty result", Record{Cycle: 1}, "result"},
		{"unknown result", Record{Cycle: 1, Result: "idle"}, "result"},
		{"wrong case result", Record{Cycle: 1, Result: "Improved"}, "result"},
		{"second writer", mustParse(t, lineSecondWriter), "result"},
		{"cycle 0", Record{Cycle: 0, Result: Unchanged}, "cycle"},
		{"cycle -1", Record{Cycle: -1, Result: Unchanged}, "cycle"},
		{"improved without sha", with(productive(Improved), func(r *Record) { r.CanonicalSHA = "" }), "canonical_sha"},
		{"regressed without sha", with(productive(Regressed), func(r *Record) { r.CanonicalSHA = "" }), "canonical_sha"},
		{"harvested without sha", with(productive(Harvested), func(r *Record) { r.CanonicalSHA = "" }), "canonical_sha"},
		{"improved with sha only", with(productive(Improved), func(r *Record) { r.CanonicalSHA, r.SHA = "", "s" }), ""},
		{"improved without goals_passing", with(productive(Improved), func(r *Record) { r.GoalsPassing = nil }), "goals_passing"},
		{"improved without goals_total", with(productive(Improved), func(r *Record) { r.GoalsTotal = nil }), "goals_total"},
		{"harvested without counts", with(productive(Harvested), func(r *Record) { r.GoalsPassing, r.GoalsTotal = nil, nil }), "goals_passing|goals_total"},
		{"passing > total", with(productive(Improved), func(r *Record) { r.GoalsPassing = ip(3) }), "goals_passing|goals_total"},
		{"unchanged passing > total", Record{Cycle: 1, Result: Unchanged, GoalsPassing: ip(3), GoalsTotal: ip(2)}, "goals_passing|goals_total"},
		{"negative passing", with(productive(Improved), func(r *Record) { r.GoalsPassing = ip(-1) }), "goals_passing"},
		{"negative total", Record{Cycle: 1, Result: Unchanged, GoalsTotal: ip(-1)}, "goals_total"},
		{"negative both", Record{Cycle: 1, Result: Unchanged, GoalsPassing: ip(-2), GoalsTotal: ip(-1)}, "goals_passing|goals_total"},
		{"negative idle streak", Record{Cycle: 1, Result: Unchanged, IdleStreak: ip(-1)}, "idle_streak"},
	}
	for _, tt := range tests {
		err := tt.r.Validate()
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: Validate() = %v, want nil", tt.name, err)
			}
			continue
		}
		wantFieldError(t, tt.name+": Validate()", err, tt.field)
	}
}

var hexID = regexp.MustCompile(`^[0-9a-f]{20}$`)

func TestDeriveID(t *testing.T) {
	const attached = "0123456789abcdef0123456789abcdef01234567"
	base := func() Record { return mustParse(t, lineFullTrace) }
	b := base()
	id := b.DeriveID(attached)
	if !hexID.MatchString(id) {
		t.Fatalf("DeriveID = %q, want 20 hex digits", id)
	}
	if again := b.DeriveID(attached); again != id {
		t.Errorf("DeriveID is not deterministic: %s then %s", id, again)
	}
	// Same record written differently: other key order, spacing.
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(lineFullTrace), &m); err != nil {
		t.Fatal(err)
	}
	reordered, _ := json.MarshalIndent(m, "", "  ") // keys sorted, multi-line
	reordered = bytes.ReplaceAll(reordered, []byte("\n"), []byte(" "))
	if r := mustParse(t, string(reordered)); r.DeriveID(attached) != id {
		t.Errorf("DeriveID depends on how the line was written")
	}
	// An existing id is ignored, and left alone.
	withID := base()
	withID.ID = "ffffffffffffffffffff"
	if got := withID.DeriveID(attached); got != id {
		t.Errorf("DeriveID with an id = %s, want %s", got, id)
	}
	if withID.ID != "ffffffffffffffffffff" {
		t.Errorf("DeriveID changed the record's id to %q", withID.ID)
	}
	// A record that keeps its legacy names is another record than the same
	// one written with current names only (both are kept as written).
	legacy := mustParse(t, lineLegacy)
	current := mustParse(t, `{"cycle":5,"target":"x","sha":"abc"}`)
	if legacy.DeriveID(attached) == current.DeriveID(attached) {
		t.Error("a record with legacy names has the id of one without them")
	}

	mutations := map[string]func(*Record){
		"v":                     func(r *Record) { r.V = 2 },
		"cycle":                 func(r *Record) { r.Cycle++ },
		"target":                func(r *Record) { r.Target += "x" },
		"result":                func(r *Record) { r.Result = Regressed },
		"sha":                   func(r *Record) { r.SHA = "a2" },
		"canonical_sha":         func(r *Record) { r.CanonicalSHA = "a2" },
		"log_sha":               func(r *Record) { r.LogSHA = "l" },
		"cycle_start_sha":       func(r *Record) { r.CycleStartSHA = "c" },
		"timestamp":             func(r *Record) { r.Timestamp = "2026-02-12T00:00:01Z" },
		"goals_passing":         func(r *Record) { *r.GoalsPassing = 0 },
		"goals_passing absent":  func(r *Record) { r.GoalsPassing = nil },
		"goals_total":           func(r *Record) { r.GoalsTotal = ip(3) },
		"quality_score":         func(r *Record) { r.QualityScore = fp(0.5) },
		"quality_score zero":    func(r *Record) { r.QualityScore = fp(0) },
		"idle_streak":           func(r *Record) { r.IdleStreak = ip(0) },
		"parallel":              func(r *Record) { r.Parallel = true },
		"goal_ids":              func(r *Record) { r.GoalIDs = []string{"t"} },
		"goal_ids empty":        func(r *Record) { r.GoalIDs = []string{} },
		"gate":                  func(r *Record) { r.Gate = raw(`"PASS"`) },
		"trace absent":          func(r *Record) { r.Trace = nil },
		"trace field":           func(r *Record) { r.Trace.Fields["gherkin"] = "Given y" },
		"trace field removed":   func(r *Record) { delete(r.Trace.Fields, "refactor_note") },
		"trace extra":           func(r *Record) { r.Trace.Extra["bead_id"] = raw(`"b-2"`) },
		"extra added":           func(r *Record) { r.Extra = map[string]json.RawMessage{"mode": raw(`"evolve"`)} },
		"extra number spelling": func(r *Record) { r.Extra = map[string]json.RawMessage{"n": raw(`1.50`)} },
	}
	seen := map[string]string{id: "base"}
	for name, mutate := range mutations {
		r := base()
		mutate(&r)
		got := r.DeriveID(attached)
		if !hexID.MatchString(got) {
			t.Errorf("%s: DeriveID = %q, want 20 hex digits", name, got)
		}
		if other, dup := seen[got]; dup {
			t.Errorf("DeriveID(%s) = DeriveID(%s) = %s", name, other, got)
		}
		seen[got] = name
	}
	// Extras differing only in number spelling are different content.
	x1, x2 := base(), base()
	x1.Extra = map[string]json.RawMessage{"n": raw(`1.5`)}
	x2.Extra = map[string]json.RawMessage{"n": raw(`1.50`)}
	if x1.DeriveID(attached) == x2.DeriveID(attached) {
		t.Error("DeriveID ignores the spelling of an unknown number, which is kept byte-exact")
	}
	for _, other := range []string{"", "0123456789abcdef0123456789abcdef01234568", "refs/heads/main"} {
		if got := b.DeriveID(other); got == id {
			t.Errorf("DeriveID(%q) = DeriveID(%q)", other, attached)
		} else if !hexID.MatchString(got) {
			t.Errorf("DeriveID(%q) = %q", other, got)
		}
	}
}

func TestLess(t *testing.T) {
	recs := []Record{
		{Cycle: 1, Timestamp: "2026-01-01T00:00:00Z", ID: "b"},
		{Cycle: 1, Timestamp: "2026-01-01T00:00:00Z", ID: "c"},
		{Cycle: 1, Timestamp: "2026-01-02T00:00:00Z", ID: "a"},
		{Cycle: 2, Timestamp: "2025-01-01T00:00:00Z", ID: "a"},
		{Cycle: 2, Timestamp: "2025-01-01T00:00:00Z", ID: "z"},
		{Cycle: 10, Timestamp: "", ID: "z"},
		{Cycle: 10, Timestamp: "2020-01-01T00:00:00Z", ID: ""},
		{Cycle: 11},
	}
	// recs is in order: Less(a, b) holds exactly when a comes before b.
	for i := range recs {
		for j := range recs {
			if got, want := Less(&recs[i], &recs[j]), i < j; got != want {
				t.Errorf("Less(%+v, %+v) = %v, want %v", recs[i], recs[j], got, want)
			}
		}
	}
	shuffled := []Record{recs[5], recs[2], recs[7], recs[0], recs[4], recs[6], recs[1], recs[3]}
	sort.Slice(shuffled, func(i, j int) bool { return Less(&shuffled[i], &shuffled[j]) })
	if !reflect.DeepEqual(shuffled, recs) {
		t.Errorf("sorted = %+v\nwant %+v", shuffled, recs)
	}
}

func TestFieldErrorMessage(t *testing.T) {
	if got := (&FieldError{Field: "cycle", Reason: "is missing"}).Error(); !strings.Contains(got, `"cycle"`) || !strings.Contains(got, "is missing") {
		t.Errorf("FieldError.Error() = %q", got)
	}
	if got := (&FieldError{Reason: "not a JSON object"}).Error(); got != "not a JSON object" {
		t.Errorf("FieldError.Error() without field = %q", got)
	}
}

// Parse accepts a line exactly when encoding/json reads it as one object
// (for lines whose known fields are fine): the expectation comes from
// encoding/json, not from the scanner.
func TestParseAgreesWithEncodingJSON(t *testing.T) {
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	values := []string{
		`"a` + "\x1f" + `b"`, `"a` + "\t" + `b"`, `"a` + "\x00" + `"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"\ud800"`,
		`"\/\b\f\n\r\t\"\\"`, `"` + "\xff\xfe" + `"`, `"é"`, "\"\u2028\"",
		`01`, `1.`, `.5`, `-`, `+1`, `1e`, `1e+`, `-0.0e+0`, `1E-2`, `0x10`, `NaN`, `Infinity`, `1_000`,
		`tru`, `true`, `nul`, `null`, `False`, `[1,]`, `[,1]`, `[1 2]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `{'a':1}`,
		`{"a":1}`, `[]`, `{}`, `[[]]`, deep(9998), deep(9999), deep(10000), deep(10001), `"` + strings.Repeat("x", 5000) + `"`,
	}
	var lines []string
	for _, v := range values {
		lines = append(lines, `{"cycle":1,"x":`+v+`}`)
	}
	lines = append(lines, "\ufeff"+`{"cycle":1}`, `{"cycle":1,}`, `{,"cycle":1}`, `{"cycle":1 "x":2}`,
		`{"cycle":1}`+"\x00", "\v"+`{"cycle":1}`, "\r\n\t "+`{"cycle":1}`+" \t\r\n", `{"cycle":1}/**/`)
	for _, line := range lines {
		_, err := Parse([]byte(line))
		var obj map[string]json.RawMessage
		valid := json.Unmarshal([]byte(line), &obj) == nil
		short := line
		if len(short) > 80 {
			short = short[:80] + "…"
		}
		if valid && err != nil {
			t.Errorf("Parse(%q) = %v, but encoding/json reads it", short, err)
		}
		if !valid {
			wantFieldError(t, fmt.Sprintf("Parse(%q), not JSON for encoding/json", short), err, "")
		}
	}
}

// A commit's Evolve-Record digest names what the record says of the cycle:
// not the commit's own names, nor what is set as the record is written,
// nor the "anchored" an import sets on a copy stored on its anchor. Any
// other change is another digest.
func TestCommitDigest(t *testing.T) {
	two := 2
	r := Record{V: 1, ID: "0123456789abcdef0a1b", Cycle: 3, Target: "t", Result: Improved, GoalsPassing: &two, GoalsTotal: &two}
	want := CommitDigest(&r)
	same := r
	same.SHA, same.CanonicalSHA = "0101010101010101010101010101010101010101", "0101010101010101010101010101010101010101"
	same.Extra = map[string]json.RawMessage{"prev": Value("a:b"), "recorded_by": Value("Ann <a@x>"), "host": Value("box"),
		"saved": Value("x"), "anchored": json.RawMessage("true")}
	if got := CommitDigest(&same); got != want {
		t.Errorf("with the commit's names, what the write sets and anchored: %s, want %s", got, want)
	}
	other := same
	other.Target = "u"
	if CommitDigest(&other) == want {
		t.Error("another target has the same digest")
	}
}
