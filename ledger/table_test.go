package ledger

import (
	"encoding/json"
	"reflect"
	"testing"
)

// tableView is what a listing reads of a record: the fields TableRecord
// fills.
func tableView(r Record) Record {
	t := Record{V: r.V, ID: r.ID, Cycle: r.Cycle, Target: r.Target, Result: r.Result, SHA: r.SHA,
		CanonicalSHA: r.CanonicalSHA, Timestamp: r.Timestamp, GoalsPassing: r.GoalsPassing,
		GoalsTotal: r.GoalsTotal, GoalIDs: r.GoalIDs}
	for _, k := range []string{"recorded_by", "host", "anchored", "aborted", "ruler_changed", "ruler_accepted", "target_before", "target_after", "score", "before"} {
		if v, ok := r.Extra[k]; ok {
			if t.Extra == nil {
				t.Extra = map[string]json.RawMessage{}
			}
			t.Extra[k] = v
		}
	}
	return t
}

// checkTable holds TableRecord to Parse: on any line, the same error or
// the same fields a listing shows.
func checkTable(t *testing.T, line []byte) {
	t.Helper()
	want, werr := Parse(line)
	got, gerr := TableRecord(line)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("TableRecord(%s): error %v, Parse: %v", line, gerr, werr)
	}
	if werr != nil {
		return
	}
	if w := tableView(want); !reflect.DeepEqual(tableView(got), w) {
		t.Fatalf("TableRecord(%s) =\n%+v\nParse gives\n%+v", line, tableView(got), w)
	}
}

func TestTableRecord(t *testing.T) {
	for _, tt := range summaryLines {
		checkTable(t, []byte(tt.line))
		if r, err := Parse([]byte(tt.line)); err == nil {
			checkTable(t, r.Marshal())
		}
	}
	for _, line := range []string{
		`{"v":1,"id":"a","cycle":3,"target":"","result":"improved","sha":"x","goals_passing":2,"goals_total":4,"goal_ids":["a","b"],"host":"h","recorded_by":"R <r@x>","anchored":true}`,
		`{"v":1,"cycle":3,"result":"harvested","goals_passing":null}`,
		`{"v":1,"cycle":4,"result":"improved","before":{"goals_passing":1,"goals_total":2,"score":50},"ruler_accepted":[{"path":"a_test.go","by":"A <a@x>","why":"w"}],"ruler_changed":["M b_test.go"],"score":50,"target_after":"fail","target_before":"fail"}`,
		`{"cycle":"3"}`,
		`not json`,
	} {
		checkTable(t, []byte(line))
	}
}

func FuzzTableRecord(f *testing.F) {
	for _, tt := range summaryLines {
		f.Add(tt.line)
	}
	f.Fuzz(func(t *testing.T, line string) {
		checkTable(t, []byte(line))
		if r, err := Parse([]byte(line)); err == nil {
			checkTable(t, r.Marshal())
		}
	})
}
