package cycle

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/git-evolve/git-evolve/ledger"
)

func TestFitnessOf(t *testing.T) {
	for _, c := range []struct {
		in    string
		score float64
		ok    bool
		total int
	}{
		{`0.75`, 0.75, true, 0},
		{`"0.5"`, 0.5, true, 0},
		{`"9/10"`, 0.9, true, 10},
		{`{"score": 3}`, 3, true, 0},
		{`{"passing": 1, "total": 4}`, 0.25, true, 4},
		{`{"goals_passing": 2, "goals_total": 2}`, 1, true, 2},
		{`"5/4"`, 0, false, 0},
		{`"x"`, 0, false, 0},
		{`null`, 0, false, 0},
		{`[1]`, 0, false, 0},
		{`true`, 0, false, 0},
	} {
		f, ok := fitnessOf(json.RawMessage(c.in))
		if ok != c.ok || ok && math.Abs(f.score-c.score) > 1e-9 {
			t.Errorf("fitnessOf(%s) = %v, %v; want %v, %v", c.in, f.score, ok, c.score, c.ok)
		}
		if c.total > 0 && (f.total == nil || *f.total != c.total) {
			t.Errorf("fitnessOf(%s): total %v, want %d", c.in, f.total, c.total)
		}
	}
}

func TestInferResult(t *testing.T) {
	for _, c := range []struct{ line, result string }{
		{`{"cycle":1,"commit":"abc","fitness_before":1,"fitness_after":2}`, ledger.Improved},
		{`{"cycle":1,"commit":"abc","fitness_before":"3/4","fitness_after":"2/4"}`, ledger.Regressed},
		{`{"cycle":1,"commit":"abc"}`, ledger.Improved},
		{`{"cycle":1,"fitness_before":1,"fitness_after":2}`, ledger.Unchanged},
		{`{"cycle":1,"commit":"abc","type":"harvest"}`, ledger.Harvested},
		{`{"cycle":1,"commit":"abc","type":"quarantined"}`, ledger.Quarantined},
		{`{"cycle":1,"commit":"abc","type":"idle"}`, ledger.Unchanged},
	} {
		r, err := ledger.Parse([]byte(c.line))
		if err != nil {
			t.Fatal(err)
		}
		inferResult(&r)
		if r.Result != c.result {
			t.Errorf("%s: inferred %q, want %q", c.line, r.Result, c.result)
		}
		if string(r.Extra[Inferred]) == "" {
			t.Errorf("%s: not marked inferred", c.line)
		}
		if _, err := ledger.Parse(r.Marshal()); err != nil {
			t.Errorf("%s: the inferred record does not read back: %v", c.line, err)
		}
	}
}

// FuzzFitnessOf: any value reads as a finite fitness or none, and goal
// counts read are in order.
func FuzzFitnessOf(f *testing.F) {
	for _, s := range []string{`0.5`, `"1/2"`, `{"score":1}`, `{"passing":1,"total":2}`, `"1e400"`, `"-1/-2"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, ok := fitnessOf(data)
		if !ok {
			return
		}
		if math.IsNaN(v.score) || math.IsInf(v.score, 0) {
			t.Fatalf("fitnessOf(%q): score %v", data, v.score)
		}
		if (v.passing == nil) != (v.total == nil) || v.total != nil && (*v.passing < 0 || *v.passing > *v.total) {
			t.Fatalf("fitnessOf(%q): goal counts %v/%v", data, v.passing, v.total)
		}
	})
}
