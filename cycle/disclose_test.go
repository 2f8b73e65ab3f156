package cycle

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

func parseRecord(t *testing.T, line string) ledger.Record {
	t.Helper()
	r, err := ledger.Parse([]byte(line))
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

func TestJudgedOf(t *testing.T) {
	start, work, saved := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for _, tc := range []struct {
		line  string
		work  string
		saved bool
		ok    bool
	}{
		{`{"cycle":1,"result":"improved","canonical_sha":"` + work + `","cycle_start_sha":"` + start + `"}`, work, false, true},
		{`{"cycle":1,"result":"regressed","canonical_sha":"` + work + `","cycle_start_sha":"` + start + `","saved":"` + saved + `"}`, saved, true, true},
		// a later revert (git evolve revert) names no work of its own
		{`{"cycle":1,"result":"regressed","canonical_sha":"` + work + `","cycle_start_sha":"` + start + `","saved":"` + saved + `","reverts_cycle":3}`, "", false, false},
		{`{"cycle":1,"result":"regressed","canonical_sha":"` + work + `","cycle_start_sha":"` + start + `"}`, "", false, false},
		{`{"cycle":1,"result":"improved","canonical_sha":"` + work + `"}`, "", false, false},
		{`{"cycle":1,"result":"unchanged","canonical_sha":"` + work + `","cycle_start_sha":"` + start + `","saved":"` + saved + `"}`, "", false, false},
		{`{"cycle":1,"result":"improved","canonical_sha":"HEAD","cycle_start_sha":"` + start + `"}`, "", false, false},
	} {
		r := parseRecord(t, tc.line)
		j, ok := JudgedOf(&r)
		if ok != tc.ok || ok && (j.Start.String() != start || j.Work.String() != tc.work || j.Saved != tc.saved) {
			t.Errorf("JudgedOf(%s) = %+v, %v", tc.line, j, ok)
		}
	}
}

// RulerFiles reads each listed file's blobs and sizes between the start
// and the work; a file the two commits hold alike is said so, and commits
// that are not here are ErrWorkNotHere.
func TestRulerFiles(t *testing.T) {
	dir, _ := testRepo(t, 1)
	writeFile(t, dir, "a_test.go", "package a\n")
	writeFile(t, dir, "gone_test.go", "package a\n\n// gone\n")
	writeFile(t, dir, "same_test.go", "package a\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "start")
	start := revParse(t, dir, "HEAD")
	writeFile(t, dir, "a_test.go", "package a\n\n// more\n")
	writeFile(t, dir, "t/new_test.go", "package t\n")
	git(t, dir, "rm", "-q", "gone_test.go")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "work")
	work := revParse(t, dir, "HEAD")
	l := openLedger(t, dir)
	j := Judged{Start: mustParseHash(t, start), Work: mustParseHash(t, work)}
	ruler := []DisclosedRuler{{Status: "M", Path: "a_test.go"}, {Status: "-", Path: "gone_test.go"}, {Status: "M", Path: "same_test.go"}, {Status: "+", Path: "t/new_test.go"}}
	files, err := l.RulerFiles(j, ruler)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range files {
		got = append(got, f.String()+" "+strconv.FormatInt(f.OldSize, 10)+"→"+strconv.FormatInt(f.NewSize, 10)+map[bool]string{true: " same"}[f.Same])
		if f.OldMode != 0 && f.Old.IsZero() || f.NewMode != 0 && f.New.IsZero() {
			t.Errorf("%s: a side with a mode has no blob", f.Path)
		}
	}
	want := []string{"M a_test.go 10→19", "- gone_test.go 19→-1", "M same_test.go -1→-1 same", "+ t/new_test.go -1→10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RulerFiles =\n%q\nwant\n%q", got, want)
	}
	if files, err := l.RulerFiles(j, nil); err != nil || files != nil {
		t.Errorf("RulerFiles of no file = %v, %v", files, err)
	}
	j.Work = mustParseHash(t, strings.Repeat("e", 40))
	if _, err := l.RulerFiles(j, ruler); !errors.Is(err, ErrWorkNotHere) {
		t.Errorf("RulerFiles with the work missing: %v, want ErrWorkNotHere", err)
	}
}

func mustParseHash(t *testing.T, s string) gitstore.Hash {
	t.Helper()
	h, err := gitstore.ParseHash(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
