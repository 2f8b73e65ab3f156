package cycle

import (
	"reflect"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

func TestRulerOnly(t *testing.T) {
	changes := []RulerChange{{Path: "a_test.go", Status: "M"}, {Path: "tests/x.py", Status: "+"}, {Path: "b_test.go", Status: "M", Accepted: true},
		{Path: "src/lib.rs", Status: "M", rest: true}}
	for _, tc := range []struct {
		paths []string
		want  bool
	}{
		{[]string{"a_test.go"}, true},
		{[]string{"a_test.go", "tests/x.py"}, true},
		{[]string{"a_test.go", "a.go"}, false},
		{[]string{"b_test.go"}, false},  // accepted: it counts as the cycle's work
		{[]string{"src/lib.rs"}, false}, // its tests and its code changed
		{[]string{"a_test.go", "src/lib.rs"}, false},
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

func TestEscapes(t *testing.T) {
	for _, tc := range []struct {
		path, target string
		want         bool
	}{
		{"calc.sh", "impl.sh", false},
		{"a/b/c.sh", "../impl.sh", false},
		{"a/c.sh", "../../impl.sh", true},
		{"c.sh", "../x", true},
		{"c.sh", "/etc/passwd", true},
		{"c.sh", "", true},
		{"c.sh", `C:\x`, true},
		{"a/c.sh", "./b/../../c", false},
	} {
		if got := escapes(tc.path, tc.target); got != tc.want {
			t.Errorf("escapes(%q, %q) = %v, want %v", tc.path, tc.target, got, tc.want)
		}
	}
}

func TestChangedExisting(t *testing.T) {
	h := func(b byte) gitstore.Hash { var x gitstore.Hash; x[0] = b; return x }
	changes := []RulerChange{
		{Path: "old_test.go", Status: "-", old: h(1)},
		{Path: "new_test.go", Status: "+", new: h(1)}, // a rename
		{Path: "gone_test.go", Status: "-", old: h(2)},
		{Path: "check.sh", Status: "M", old: h(3), new: h(4)},
		{Path: "ok_test.go", Status: "M", Accepted: true},
	}
	var got []string
	for _, c := range changedExisting(changes) {
		got = append(got, c.Path)
	}
	if want := []string{"gone_test.go", "check.sh"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("changedExisting = %q, want %q", got, want)
	}
}
