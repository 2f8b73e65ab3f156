package ledger

import (
	"reflect"
	"testing"
)

func parseRecord(t *testing.T, line string) Record {
	t.Helper()
	r, err := Parse([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// Disclose reads the lists a finish writes, puts an accepted change beside
// the others, and reads a field of another shape as absent.
func TestDisclose(t *testing.T) {
	r := parseRecord(t, `{"cycle":1,"result":"improved","changed":["M a.go","M b_test.go","+ c_test.go","- d_test.go"],`+
		`"ruler_accepted":[{"path":"b_test.go","by":"A <a@x>","why":"b now adds one"},{"path":"e_test.go","by":"A <a@x>","why":"past the list"},{"path":"","by":"x","why":"y"}],`+
		`"ruler_changed":["+ c_test.go","- d_test.go","c_test.go","? x","+ c_test.go"],"tests_passed":{"runner":"go","before":3,"after":4}}`)
	d := Disclose(&r)
	if want := []string{"M a.go", "M b_test.go", "+ c_test.go", "- d_test.go"}; !reflect.DeepEqual(d.Changed, want) {
		t.Errorf("Changed = %q, want %q", d.Changed, want)
	}
	var got []string
	for _, f := range d.Ruler {
		s := f.String()
		if f.Accepted != nil {
			s += " accepted by " + f.Accepted.By + ": " + f.Accepted.Why
		}
		got = append(got, s)
	}
	want := []string{"M b_test.go accepted by A <a@x>: b now adds one", "+ c_test.go", "- d_test.go", "e_test.go accepted by A <a@x>: past the list"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Ruler =\n%q\nwant\n%q", got, want)
	}
	if d.Tests == nil || *d.Tests != (CensusCount{Runner: "go", Before: 3, After: 4}) {
		t.Errorf("Tests = %+v", d.Tests)
	}
	odd := parseRecord(t, `{"cycle":1,"result":"improved","changed":"M a.go","ruler_changed":{"M":"a"},"ruler_accepted":"yes","tests_passed":[1,2]}`)
	if d := Disclose(&odd); d.Changed != nil || d.Ruler != nil || d.Tests != nil {
		t.Errorf("Disclose of fields in another shape = %+v", d)
	}
}
