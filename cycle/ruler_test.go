package cycle

import (
	"reflect"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

func TestRulerOnly(t *testing.T) {
	changes := []RulerChange{{Path: "a_test.go", Status: "M"}, {Path: "tests/x.py", Status: "+"}, {Path: "b_test.go", Status: "M", Accepted: true}}
	for _, tc := range []struct {
		paths []string
		want  bool
	}{
		{[]string{"a_test.go"}, true},
		{[]string{"a_test.go", "tests/x.py"}, true},
		{[]string{"a_test.go", "a.go"}, false},
		{[]string{"b_test.go"}, false}, // accepted: it counts as the cycle's work
		{nil, false},
	} {
		d := Delta{Files: len(tc.paths), Paths: tc.paths}
		if got := rulerOnly(d, changes); got != tc.want {
			t.Errorf("rulerOnly(%q) = %v, want %v", tc.paths, got, tc.want)
		}
	}
	if rulerOnly(Delta{Files: 1, Paths: []string{"a.go"}}, nil) {
		t.Error("a cycle that changed no ruler file changed only its ruler")
	}
}

func TestChangedList(t *testing.T) {
	files := []gitstore.FileChange{{Path: "new.go", NewMode: 0o100644}, {Path: "gone.go", OldMode: 0o100644}, {Path: "both.go", OldMode: 0o100644, NewMode: 0o100755}}
	if got, want := changedList(files), []string{"+ new.go", "- gone.go", "M both.go"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changedList = %q, want %q", got, want)
	}
	many := make([]gitstore.FileChange, maxChanged+5)
	for i := range many {
		many[i] = gitstore.FileChange{Path: "f", OldMode: 0o100644, NewMode: 0o100644}
	}
	if n := len(changedList(many)); n != maxChanged {
		t.Fatalf("%d paths listed, want at most %d", n, maxChanged)
	}
}
