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
		{"empty check", "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `` | 1 |\n", "GOALS.md:5:7: the check is empty"},
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
	f.Add([]byte(rowsOf("| pr | `gh api x --jq 'map(.a) | length'` → 0 after 5-10 min wait | 3 | d |")))
	f.Add([]byte(rowsOf("| a | `x` `y` | 1 | d |\n| b | <b>x</b> | 2 |\n| c | ``x` | 3 | d | |\n| d | \\`x` | 4 | \\\\|")))
	f.Add([]byte("## Directives\n### 1. a\n**Directive ID:** B\n### 1. b\n### c\n## Gates\n|ID|Check|Weight|Timeout|Pass When|Type|\n|-|-|-|\n|a|`true`|1|5x|`output ==`|odd|\n|b|go test|2|90|`exit_code == 0`|meta|\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("GOALS.md", data)
		if err != nil {
			var ps Problems
			if !errors.As(err, &ps) || ps.Errors() == 0 {
				t.Fatalf("an error that is not Problems: %v", err)
			}
			for _, p := range ps {
				if p.Path != "GOALS.md" || p.Msg == "" || p.Line < 0 || (p.Line > 0) != (p.Col > 0) {
					t.Fatalf("a problem that says not where or what: %+v", p)
				}
			}
			return
		}
		if len(file.Goals) == 0 {
			t.Fatal("a file without goals parsed")
		}
		lines := strings.Split(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n")
		ids := map[string]bool{}
		for _, g := range file.Goals {
			if !kebab().MatchString(g.ID) || strings.TrimSpace(g.Check) == "" || g.Weight < 1 || g.Weight > 10 || ids[g.ID] ||
				!goalTypes[g.Type] || g.Timeout <= 0 || g.Timeout > maxTimeout || g.Continuous != nil {
				t.Fatalf("a goal the YAML reader would refuse: %+v", g)
			}
			if g.Line < 1 || g.Line > len(lines) || !strings.Contains(lines[g.Line-1], "|") || !strings.Contains(lines[g.Line-1], g.ID) {
				t.Fatalf("goal %q says it is at line %d", g.ID, g.Line)
			}
			ids[g.ID] = true
		}
		for _, p := range file.LeftOut {
			if p.Warning || p.Msg == "" || p.Line < 1 || p.Line > len(lines) || p.Col < 1 || p.Col > len(lines[p.Line-1])+1 {
				t.Fatalf("an entry left out that says not where or why: %+v", p)
			}
		}
		for _, p := range file.Warnings {
			if !p.Warning || p.Msg == "" || p.Line < 1 || p.Line > len(lines) || p.Col < 1 {
				t.Fatalf("a warning that says not where or what: %+v", p)
			}
		}
		nums, dids := map[int]bool{}, map[string]bool{}
		for _, d := range file.Directives {
			if !kebab().MatchString(d.ID) || d.Number < 0 || nums[d.Number] || dids[d.ID] {
				t.Fatalf("directive %+v", d)
			}
			nums[d.Number], dids[d.ID] = true, true
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

// rowsOf is a GOALS.md whose Gates table holds a good row, then row.
func rowsOf(row string) string {
	return "# G\n\n## Gates\n\n| ID | Check | Weight | Description |\n|----|-------|--------|-------------|\n| good | `true` | 1 | kept |\n" + row + "\n"
}

// A row that cannot be read is left out, named with its line, column and
// why; the other rows are the goals.
func TestMarkdownRowLeftOut(t *testing.T) {
	for _, c := range []struct{ name, row, want string }{
		{"too few cells", "| short | `true` |", "GOALS.md:8:19: the row has 2 cell(s), the header 4: it has no Weight cell"},
		{"no cells", "|", "GOALS.md:8:2: the row has 0 cell(s), the header 4: it has no ID, Check or Weight cell"},
		{"too many cells", "| many | `true` | 2 | d | extra |", "GOALS.md:8:27: the row has 5 cell(s), the header 4: a | inside a cell is written \\|"},
		{"pipe in a code span", "| pipe | `echo a | wc -l` | 3 | d |", "GOALS.md:8:18: this | is inside the code span that opens at column 10: GitHub's tables end a cell at every | not escaped, even between backticks; write it \\| (the check still gets a plain |)"},
		{"empty check", "| empty | `` | 1 | d |", "GOALS.md:8:11: the check is empty"},
		{"empty check cell", "| empty |  | 1 | d |", "GOALS.md:8:10: the check is empty"},
		{"blank code span", "| empty | ` ` | 1 | d |", "GOALS.md:8:11: the check is empty"},
		{"unterminated code span", "| open | `go test ./... | 1 | d |", "GOALS.md:8:10: the code span that opens here is not closed (a ` is missing)"},
		{"HTML in the check", "| html | <code>go test</code> | 1 | d |", "GOALS.md:8:10: the check holds HTML (<code>), which GitHub does not show as written: write the command as a code span (between backticks)"},
		{"HTML in a bare command", "| redirect | sort <in >out | 1 | d |", "GOALS.md:8:19: the check holds HTML (<in >)"},
		{"two code spans", "| two | `make` then `make test` | 1 | d |", "GOALS.md:8:9: the check cell has 2 code spans: which one is the command is not clear; write one command (`a && b`) and put the prose in the Description"},
		{"bad weight", "| heavy | `true` | 11 | d |", "GOALS.md:8:20: weight must be a whole number from 1 to 10, not \"11\""},
		{"bad id", "| A_b | `true` | 1 | d |", "GOALS.md:8:3: id \"A_b\" must be kebab-case"},
		{"no id", "|  | `true` | 1 | d |", "GOALS.md:8:2: the row has no id"},
		{"duplicate id", "| good | `false` | 2 | d |", "GOALS.md:8:3: goal id \"good\" is also used at line 7"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("GOALS.md", []byte(rowsOf(c.row)))
			if err != nil {
				t.Fatalf("the file is refused: %v", err)
			}
			if len(f.Goals) != 1 || f.Goals[0].ID != "good" || f.Goals[0].Check != "true" {
				t.Errorf("goals %+v", f.Goals)
			}
			if len(f.LeftOut) != 1 || !strings.HasPrefix(f.LeftOut[0].Error(), c.want) {
				t.Errorf("left out:\n%v\nwant %q", f.LeftOut, c.want)
			}
		})
	}
}

// Every row left out: nothing to measure, the file is refused, each row
// named.
func TestMarkdownEveryRowLeftOut(t *testing.T) {
	src := "## Gates\n\n| ID | Check | Weight |\n|---|---|---|\n| a | `x | y` | 1 |\n| b | `` | 2 |\n"
	_, err := Parse("GOALS.md", []byte(src))
	var ps Problems
	if !errors.As(err, &ps) || ps.Errors() != 3 {
		t.Fatalf("got %v", err)
	}
	for i, want := range []string{"GOALS.md:3:1: no row of the Gates table can be read: no goals to measure", "GOALS.md:5:10: this | is inside", "GOALS.md:6:7: the check is empty"} {
		if !strings.HasPrefix(ps[i].Error(), want) {
			t.Errorf("problem %d: %v, want %q", i, ps[i], want)
		}
	}
}

// The command of a check cell is its code span; prose around it is not
// run, and is warned about.
func TestMarkdownCheckCell(t *testing.T) {
	for _, c := range []struct{ name, cell, check, warn string }{
		{"one span", "`go test ./...`", "go test ./...", ""},
		{"double backticks", "`` echo `date` ``", "echo `date`", ""},
		{"placeholder in a span", "`gh pr checks <pr-number>`", "gh pr checks <pr-number>", ""},
		{"escaped pipe", "`a \\| b`", "a | b", ""},
		{"a backslash before an escaped pipe", "`grep 'a\\\\|b' x`", "grep 'a\\|b' x", ""},
		{"prose after", "`gh api x --jq 'length'` → 0 after 5-10 min wait", "gh api x --jq 'length'",
			"GOALS.md:8:7: goal c: the text outside the check's code span (\"→ 0 after 5-10 min wait\") is prose, not run: the check is gh api x --jq 'length'"},
		{"prose before", "Run `go test` first", "go test", "GOALS.md:8:7: goal c: the text outside the check's code span (\"Run … first\") is prose, not run: the check is go test"},
		{"an HTML comment after", "`true` <!-- flaky -->", "true", "(\"<!-- flaky -->\") is prose"},
		{"a stray backtick in the prose", "`true` isn`t slow", "true", "(\"isn`t slow\") is prose"},
		{"bare", "go test ./...", "go test ./...", "GOALS.md:8:7: goal c: the check is not a code span: it is run as written, go test ./... (write it between backticks)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := Parse("GOALS.md", []byte(rowsOf("| c | "+c.cell+" | 2 | d |")))
			if err != nil {
				t.Fatal(err)
			}
			if len(f.LeftOut) != 0 || len(f.Goals) != 2 {
				t.Fatalf("left out %v, goals %+v", f.LeftOut, f.Goals)
			}
			if got := f.Goals[1].Check; got != c.check {
				t.Errorf("check %q, want %q", got, c.check)
			}
			switch {
			case c.warn == "" && len(f.Warnings) != 0:
				t.Errorf("warnings %v", f.Warnings)
			case c.warn != "" && (len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Error(), c.warn)):
				t.Errorf("warnings %v, want %q", f.Warnings, c.warn)
			}
		})
	}
}

// GitHub's tables: a row short of optional cells has them empty; HTML in a
// prose cell is kept as written; an excess cell that is empty is ignored,
// with a warning.
func TestMarkdownGFMRows(t *testing.T) {
	f, err := Parse("GOALS.md", []byte(rowsOf("| short | `true` | 2 |\n| html | `true` | 3 | one<br>two |\n| trail | `true` | 4 | d | |")))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Goals) != 4 || f.Goals[1].Description != "" || f.Goals[2].Description != "one<br>two" || len(f.LeftOut) != 0 {
		t.Fatalf("goals %+v, left out %v", f.Goals, f.LeftOut)
	}
	if len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Error(), "GOALS.md:10:") || !strings.Contains(f.Warnings[0].Error(), "empty") {
		t.Errorf("warnings %v", f.Warnings)
	}
}

// A directive that cannot be read is left out too; the goals are measured.
func TestMarkdownDirectiveLeftOut(t *testing.T) {
	src := "## Directives\n\n### Do it\n\n### 1. A\n**Steer:** increase\n\n### 1. B\n\n### 2. C\n**Directive ID:** Not_Kebab\n\n### 3. D\n**Directive ID:** directive-1\n\n### 4. E\n\n" + strings.TrimPrefix(rowsOf(""), "# G\n\n")
	f, err := Parse("GOALS.md", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var nums []int
	for _, d := range f.Directives {
		nums = append(nums, d.Number)
	}
	if fmt.Sprint(nums) != "[1 4]" || len(f.Goals) != 1 {
		t.Errorf("directives %v, goals %d", nums, len(f.Goals))
	}
	want := []string{
		"GOALS.md:3:1: a directive's heading is \"### N. Title\", not \"Do it\"",
		"GOALS.md:8:5: directive 1 is also numbered so at line 5",
		"GOALS.md:11:19: directive id \"Not_Kebab\" must be kebab-case",
		"GOALS.md:13:1: directive id \"directive-1\" is also used at line 5",
	}
	if len(f.LeftOut) != len(want) {
		t.Fatalf("left out %v", f.LeftOut)
	}
	for i, w := range want {
		if !strings.HasPrefix(f.LeftOut[i].Error(), w) {
			t.Errorf("left out %d: %v, want %q", i, f.LeftOut[i], w)
		}
	}
}
