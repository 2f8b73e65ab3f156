package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/gate"
)

func TestFailureKeywords(t *testing.T) {
	f := FailureRecord{Gate: "FAIL: surface", Regressed: []string{"api-latency"},
		Failures: []gate.Failure{{What: "gate", Name: "go test ./...", Status: "fail", Reason: "exit status 1", Excerpt: "--- FAIL: TestParser (0.01s)\n    parser_test.go:12: unexpected token"}}}
	kw := failureKeywords(f)
	got := strings.Join(kw, ",")
	if !strings.HasPrefix(got, "api-latency,") || !strings.Contains(got, "surface") || !strings.Contains(got, "testparser") || !strings.Contains(got, "latency") {
		t.Errorf("keywords %s", got)
	}
	for _, w := range kw {
		if stopwords()[w] || len(w) < 4 {
			t.Errorf("keyword %q is noise", w)
		}
	}
	if kw := failureKeywords(FailureRecord{Gate: "FAIL"}); len(kw) != 0 {
		t.Errorf("a gate that says only FAIL: %v", kw)
	}
}

func TestMatchLearningsBounded(t *testing.T) {
	top := t.TempDir()
	dir := filepath.Join(top, ".agents", "learnings", "deep")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteString("the parser broke again \x1b[31mred\x1b[0m " + strings.Repeat("x", 400) + "\n")
	}
	b.WriteString("Parser\n")
	if err := os.WriteFile(filepath.Join(dir, "a.md"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "b.md"), []byte("unparsered parsers\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := matchLearnings(top, []string{"parser"})
	if len(got) != maxLearningLines {
		t.Fatalf("%d lines, want the bound %d", len(got), maxLearningLines)
	}
	for _, l := range got {
		if l.File != ".agents/learnings/deep/a.md" || strings.ContainsRune(l.Text, 0x1b) || len(l.Text) > maxLearningLine+len("…") {
			t.Fatalf("line %+v", l)
		}
	}
	if got := matchLearnings(top, []string{"parsers"}); len(got) != 1 || got[0].File != ".agents/learnings/deep/b.md" {
		t.Errorf("a word, not a part of one: %+v", got)
	}
	if got := matchLearnings(t.TempDir(), []string{"parser"}); got != nil {
		t.Errorf("no learnings: %v", got)
	}
}
