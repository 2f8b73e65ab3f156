package rulerdiff

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/git-evolve/git-evolve/ledger"
)

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
		r, err := ledger.Parse([]byte(tc.line))
		if err != nil {
			t.Fatal(err)
		}
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
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	writeFile(t, dir, "a_test.go", "package a\n")
	writeFile(t, dir, "gone_test.go", "package a\n\n// gone\n")
	writeFile(t, dir, "same_test.go", "package a\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "start")
	start := git(t, dir, "rev-parse", "HEAD")
	writeFile(t, dir, "a_test.go", "package a\n\n// more\n")
	writeFile(t, dir, "t/new_test.go", "package t\n")
	git(t, dir, "rm", "-q", "gone_test.go")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "work")
	work := git(t, dir, "rev-parse", "HEAD")
	repo, err := gitstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	j := Judged{Start: mustParseHash(t, start), Work: mustParseHash(t, work)}
	ruler := []ledger.DisclosedRuler{{Status: "M", Path: "a_test.go"}, {Status: "-", Path: "gone_test.go"}, {Status: "M", Path: "same_test.go"}, {Status: "+", Path: "t/new_test.go"}}
	files, err := RulerFiles(repo, j, ruler)
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
	if files, err := RulerFiles(repo, j, nil); err != nil || files != nil {
		t.Errorf("RulerFiles of no file = %v, %v", files, err)
	}
	j.Work = mustParseHash(t, strings.Repeat("e", 40))
	if _, err := RulerFiles(repo, j, ruler); !errors.Is(err, ErrWorkNotHere) {
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

// git runs git in dir (the tests' own git: TestMain) and returns its
// trimmed output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	return strings.TrimSpace(testenv.Git(t, dir, args...))
}

// writeFile writes content to the file at rel in dir, making its directory.
func writeFile(t *testing.T, dir, rel, content string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
