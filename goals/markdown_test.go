package goals

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestMarkdownGoals(t *testing.T) {
	data, err := os.ReadFile("testdata/GOALS.md")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("GOALS.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if f.Version != 4 || len(f.Goals) != 20 || len(f.Directives) != 14 {
		t.Fatalf("version %d, %d goals, %d directives; want 4, 20, 14", f.Version, len(f.Goals), len(f.Directives))
	}
	if !strings.HasPrefix(f.Mission, "Keep the widget service fast") {
		t.Errorf("mission %q", f.Mission)
	}
	if ns, _ := f.NorthStars.([]any); len(ns) != 2 {
		t.Errorf("north stars %v", f.NorthStars)
	}
	g := f.Goals[2]
	if g.ID != "gate-03" || g.Check != "grep -c x file.txt | wc -l" || g.Weight != 4 || g.Line != 131 || strings.Join(g.Tags, "+") != "ci+fast" {
		t.Errorf("goal 3: %+v", g)
	}
	if c := f.Goals[4].Check; c != "echo `date`" {
		t.Errorf("a double-backtick span: %q", c)
	}
	d := f.Directives[3]
	if d.Number != 4 || d.ID != "cli-ergonomics" || d.Steer != "increase" || d.Title != "Directive number 4" || d.Line != 38 {
		t.Errorf("directive 4: %+v", d)
	}
	if !strings.Contains(d.Body, "Second line of prose.") || strings.Contains(d.Body, "Steer") || !strings.Contains(d.Body, "widget --help") {
		t.Errorf("directive 4's body: %q", d.Body)
	}
	if d := f.Directives[0]; d.ID != "directive-1" || d.Metric != "test coverage" {
		t.Errorf("directive 1: %+v", d)
	}
	if d := f.Directives[6]; strings.Contains(d.Body, "99") == false || len(f.Directives) != 14 {
		t.Errorf("a heading inside a fence is the body's: %+v", d)
	}
	var gaps []int
	for _, d := range f.Gaps() {
		gaps = append(gaps, d.Number)
	}
	if got := fmt.Sprint(gaps); got != "[1 3 4 6 7 8 10 11 13 14]" {
		t.Errorf("gaps %s", got)
	}
	if len(f.Warnings) != 0 {
		t.Errorf("warnings: %v", f.Warnings)
	}
}

func TestMarkdownProblems(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"no gates", "# G\n\n## Directives\n\n### 1. A\n", "GOALS.md: no \"## Gates\" section"},
		{"no table", "## Gates\n\nprose\n", "GOALS.md:1:1: the Gates section has no table"},
		{"no weight column", "## Gates\n\n| ID | Check |\n|---|---|\n| a | `true` |\n", "GOALS.md:3:1: the Gates table has no Weight column"},
		{"bad weight", "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `true` | 11 |\n", "GOALS.md:5:16: weight must be a whole number from 1 to 10, not \"11\""},
		{"bad id", "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| A_b | `true` | 1 |\n", "GOALS.md:5:3: id \"A_b\" must be kebab-case"},
		{"duplicate id", "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `true` | 1 |\n| a | `false` | 2 |\n", "GOALS.md:6:3: goal id \"a\" is also used at line 5"},
		{"empty check", "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `` | 1 |\n", "GOALS.md:5:7: check is empty"},
		{"directive heading", "## Directives\n\n### Do it\n\n## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `true` | 1 |\n", "GOALS.md:3:1: a directive's heading is \"### N. Title\""},
		{"directive twice", "## Directives\n\n### 1. A\n### 1. B\n## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `true` | 1 |\n", "GOALS.md:4:5: directive 1 is also numbered so at line 3"},
		{"pass_when", "## Gates\n\n| ID | Check | Weight | Pass When |\n|---|---|---|---|\n| a | `true` | 1 | `output ==` |\n", "GOALS.md:5:20: pass_when \"output ==\""},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("GOALS.md", []byte(c.src))
			var ps Problems
			if !errors.As(err, &ps) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	f, err := Parse("GOALS.md", []byte("## Directives\n\n### 2. B\n**Steer:** sideways\n\n## Gates\n\n| ID | Check | Weight | Owner | Colour |\n|---|---|---|---|---|\n| a | `true` | 1 | me | red |\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Warnings) != 2 || !strings.Contains(f.Warnings[0].Error(), "GOALS.md:4:12: directive 2: steer \"sideways\"") || !strings.Contains(f.Warnings[1].Error(), "GOALS.md:8:") {
		t.Errorf("warnings: %v", f.Warnings)
	}
	if f.Goals[0].Owner != "me" {
		t.Errorf("owner %q", f.Goals[0].Owner)
	}
}

func TestSteer(t *testing.T) {
	for in, want := range map[string][2]string{
		"increase (test coverage)": {"increase", "test coverage"},
		"Complete":                 {"complete", ""},
		"`complete` ✅":             {"complete", "✅"},
		"decrease(p99)":            {"decrease", "p99"},
		"hold binary size":         {"hold", "binary size"},
		"":                         {"", ""},
	} {
		w, m := steer(in)
		if w != want[0] || m != want[1] {
			t.Errorf("steer(%q) = %q, %q; want %q", in, w, m, want)
		}
	}
}

func FuzzParseMarkdown(f *testing.F) {
	data, _ := os.ReadFile("testdata/GOALS.md")
	f.Add(data)
	f.Add([]byte("## Gates\n| ID | Check | Weight |\n|-|-|-|\n| a | `x \\| y` | 3 |\n"))
	f.Add([]byte("```\n## Gates\n```\n## Directives\n### 1. x\n**Steer:** complete\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("GOALS.md", data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("an error that is not Problems: %v", err)
			}
			return
		}
		if len(file.Goals) == 0 {
			t.Fatal("a file without goals parsed")
		}
		ids := map[string]bool{}
		for _, g := range file.Goals {
			if !kebab().MatchString(g.ID) || strings.TrimSpace(g.Check) == "" || g.Weight < 1 || g.Weight > 10 || ids[g.ID] {
				t.Fatalf("a goal the YAML reader would refuse: %+v", g)
			}
			ids[g.ID] = true
		}
		for _, d := range file.Directives {
			if d.ID == "" || d.Number < 0 {
				t.Fatalf("directive %+v", d)
			}
		}
	})
}

func TestDigestOfLeavesTheDirectivesOut(t *testing.T) {
	base := "# G\n\n## Directives\n\n### 1. A\n**Steer:** increase\n\n```\n## Gates\n| ID | Check | Weight |\n|-|-|-|\n| x | `rm -rf /` | 1 |\n```\n\n## Gates\n\n| ID | Check | Weight |\n|-|-|-|\n| a | `true` | 1 |\n"
	done := strings.Replace(base, "increase", "complete", 1)
	gate := strings.Replace(base, "`true`", "`false`", 1)
	if DigestOf("GOALS.md", []byte(base)) != DigestOf("GOALS.md", []byte(done)) {
		t.Error("marking a directive complete changed the digest")
	}
	if DigestOf("GOALS.md", []byte(base)) == DigestOf("GOALS.md", []byte(gate)) {
		t.Error("changing a check left the digest as it was")
	}
	if DigestOf("GOALS.yaml", []byte(base)) != Digest([]byte(base)) {
		t.Error("a GOALS.yaml's digest is not its content's")
	}
	f, err := Parse("GOALS.md", []byte(base))
	if err != nil || len(f.Goals) != 1 || f.Goals[0].Check != "true" {
		t.Fatalf("the fenced table in a directive is read: %+v %v", f, err)
	}
}

func TestHeadingKeepsATrailingHash(t *testing.T) {
	f, err := Parse("GOALS.md", []byte("## Directives ##\n\n### 1. Support C#\n\n## Gates\n\n| ID | Check | Weight |\n|-|-|-|\n| a | `true` | 1 |\n"))
	if err != nil || len(f.Directives) != 1 || f.Directives[0].Title != "Support C#" {
		t.Fatalf("%+v %v", f, err)
	}
}
