package goals

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// value_file is a path relative to where the check runs that does not leave
// it; anything else is an error where it is written.
func TestParseValueFile(t *testing.T) {
	doc := func(vf string) []byte {
		return []byte("version: 3\ngoals:\n  - id: a\n    description: d\n    check: c\n    weight: 1\n    continuous: {metric: m, threshold: 1, value_file: " + vf + "}\n")
	}
	for vf, want := range map[string]string{"cover.out": "cover.out", "./out/cover.out": "out/cover.out", "out/../cover.out": "cover.out"} {
		f, err := Parse("G.yaml", doc(vf))
		if err != nil {
			t.Fatalf("%s: %v", vf, err)
		}
		if got := f.Goals[0].Continuous.ValueFile; got != want {
			t.Errorf("%s: ValueFile %q, want %q", vf, got, want)
		}
	}
	for vf, want := range map[string]string{
		"/tmp/cover.out": `7:55: value_file "/tmp/cover.out" must be a path relative to where the check runs`,
		"../cover.out":   `7:55: value_file "../cover.out" must not leave where the check runs`,
		"out/../../x":    `7:55: value_file "out/../../x" must not leave where the check runs`,
		"'.'":            `7:55: value_file "." names where the check runs, not a file in it`,
		"''":             "7:55: value_file is empty",
		"[cover.out]":    "7:55: value_file must be text",
		"'\\tmp\\x'":     `7:55: value_file "\\tmp\\x" must be a path relative`,
		"\"a/\\0/b\"":    "7:55: value_file \"a/\\x00/b\" must not contain a NUL byte",
		"..":             `7:55: value_file ".." must not leave`,
	} {
		_, err := Parse("G.yaml", doc(vf))
		var ps Problems
		if !errors.As(err, &ps) || !strings.Contains(ps.Error(), "G.yaml:"+want) {
			t.Errorf("%s: Parse = %v\nwant %q", vf, err, want)
		}
	}
	f, err := Parse("G.yaml", doc("cover.out, valuefile: x"))
	if err != nil || len(f.Warnings) != 1 || !strings.Contains(f.Warnings[0].Msg, "(known: metric, threshold, direction, tolerance, value, value_file)") {
		t.Errorf("an unknown continuous key: %v, %v", f, err)
	}
}

func TestFileValue(t *testing.T) {
	profile := `mode: set
example.com/m/a.go:3.20,5.2 2 1
example.com/m/a.go:7.20,9.2 3 0
example.com/m/b.go:3.20,5.2 1 0
example.com/m/b.go:3.20,5.2 1 1
`
	junit := `<?xml version="1.0" encoding="UTF-8"?>
<!-- a report -->
<testsuites tests="6">
  <testsuite name="a">
    <testcase name="ok1"/>
    <testcase name="ok2"><system-out>coverage: 100%</system-out></testcase>
    <testcase name="broken"><failure message="x">boom</failure></testcase>
  </testsuite>
  <testsuite name="b">
    <testsuite name="nested">
      <testcase name="ok3"></testcase>
      <testcase name="crashed"><error/></testcase>
      <testcase name="later"><skipped/></testcase>
    </testsuite>
  </testsuite>
</testsuites>
`
	for _, tt := range []struct {
		name, data string
		re         string
		want       float64
		err        string
	}{
		// 3 of 6 statements once each block counts once (b.go's block ran
		// in one of the packages that listed it): 50.0.
		{"cover profile", profile, "", 50, ""},
		{"cover count", "mode: count\nm/a.go:1.1,2.2 1 7\nm/a.go:3.1,4.2 2 0\n", "", 33.3, ""},
		{"cover atomic crlf", "mode: atomic\r\nm/a.go:1.1,2.2 1 0\r\nm/a.go:3.1,4.2 2 3\r\n", "", 66.7, ""},
		{"cover tie rounds as go tool cover", "mode: set\nm/a.go:1.1,2.2 1 1\nm/a.go:3.1,4.2 399 0\n", "", 0.2, ""},
		{"cover repeated mode line", "mode: set\nm/a.go:1.1,2.2 1 1\nmode: set\nm/b.go:1.1,2.2 1 0\n", "", 50, ""},
		{"cover of no statements", "mode: set\n", "", 0, "a cover profile of no statements"},
		{"cover windows path", "mode: set\nC:\\m\\a.go:1.1,2.2 4 1\n", "", 100, ""},
		{"cover bad line", "mode: set\nm/a.go:1.1,2.2 1 1\ncoverage: 100.0% of statements\n", "", 0, "a cover profile whose line 3 is not file:line.col,line.col statements count"},
		{"cover bad count", "mode: set\nm/a.go:1.1,2.2 1 -1\n", "", 0, "a cover profile whose line 2 is not"},
		{"cover changed statements", "mode: set\nm/a.go:1.1,2.2 1 1\nm/a.go:1.1,2.2 2 1\n", "", 0, "a cover profile whose line 3 gives its block 2 statements, not 1"},
		{"junit", junit, "", 3, ""},
		{"junit one suite", `<testsuite><testcase name="a"/><testcase name="b"/></testsuite>`, "", 2, ""},
		{"junit none passed", `<testsuite><testcase><failure/></testcase></testsuite>`, "", 0, ""},
		{"junit broken", `<testsuites><testsuite><testcase></testsuite></testsuites>`, "", 0, "a JUnit report that does not parse"},
		{"junit cut short", `<testsuites><testsuite><testcase/>`, "", 0, "a JUnit report that does not parse"},
		{"junit too deep", "<testsuites>" + strings.Repeat("<x>", 100) + strings.Repeat("</x>", 100) + "</testsuites>", "", 0, "nested deeper than 64"},
		{"junit entity", `<!DOCTYPE x [<!ENTITY a "aaaa">]><testsuite><testcase name="&a;"/></testsuite>`, "", 0, "a JUnit report that does not parse"},
		{"other xml", `<coverage line-rate="0.8"><total>81.5</total></coverage>`, "", 81.5, ""},
		{"last number", "lines: 120\ncovered: 96\npercent 80.0\n", "", 80, ""},
		{"no number", "nothing here\n", "", 0, "no number in it"},
		{"pattern", "covered 96 of 120 (80.0%)\ntotal 120\n", `\(([0-9.]+)%\)`, 80, ""},
		{"pattern over a profile", profile, `a\.go:7\.20,9\.2 (\d+)`, 3, ""},
		{"pattern misses", "total 120\n", `coverage: ([0-9.]+)`, 0, "value's pattern does not match it"},
	} {
		var re *regexp.Regexp
		if tt.re != "" {
			re = regexp.MustCompile(tt.re)
		}
		v, err := FileValue([]byte(tt.data), re)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: FileValue = %v, %v, want an error %q", tt.name, v, err, tt.err)
		case tt.err == "" && (err != nil || v != tt.want):
			t.Errorf("%s: FileValue = %v, %v, want %v", tt.name, v, err, tt.want)
		}
	}
}

// A continuous goal with a value_file takes its value from the file its
// check wrote, never from its output, and from no file the check did not
// write.
func TestMeasureValueFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stale.out", "mode: set\nm/a.go:1.1,2.2 1 1\n")
	write("touched.out", "mode: set\nm/a.go:1.1,2.2 1 1\n")
	write("big.out", strings.Repeat("1\n", 2<<20+1))
	write("target.out", "mode: set\nm/a.go:1.1,2.2 1 1\n")
	if err := os.Mkdir(filepath.Join(dir, "a-dir.out"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "cover.out"), []byte("mode: set\nm/a.go:1.1,2.2 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "escape")); err != nil {
		t.Fatal(err)
	}
	cont := func(file, re string) *Continuous {
		c := &Continuous{Metric: "coverage", Threshold: 50, Direction: "higher", ValueFile: file}
		if re != "" {
			c.Value = regexp.MustCompile(re)
		}
		return c
	}
	g := func(id, check string, c *Continuous) Goal {
		gl := goal(id, check, 1)
		gl.Continuous = c
		return gl
	}
	f := &File{Goals: []Goal{
		// the code under test prints 100%; the profile says 25
		g("profile", "echo 'coverage: 100.0% of statements'; printf 'mode: set\\nm/a.go:1.1,2.2 1 1\\nm/a.go:3.1,4.2 3 0\\n' > p.out", cont("p.out", "")),
		g("fails-with-value", "printf 'mode: set\\nm/a.go:1.1,2.2 1 1\\n' > f.out; exit 1", cont("f.out", "")),
		g("pattern", "echo 'passed=99'; echo 'passed=7' > r.txt", cont("r.txt", `passed=(\d+)`)),
		g("in-a-dir", "mkdir -p out && echo 64 > out/v.txt", cont("out/v.txt", "")),
		g("stale", "echo 'coverage: 100.0%'", cont("stale.out", "")),
		g("touched", "echo 'coverage: 100.0%'; touch touched.out", cont("touched.out", "")),
		g("old-mtime", "printf 'mode: set\\nm/a.go:1.1,2.2 1 1\\n' > old.out; touch -d 2001-01-01 old.out", cont("old.out", "")),
		g("missing", "echo 'coverage: 100.0%'", cont("missing.out", "")),
		g("symlink", "ln -s target.out link.out", cont("link.out", "")),
		g("not-a-file", "echo 'coverage: 100.0%'", cont("a-dir.out", "")),
		g("big", "echo 1 >> big.out", cont("big.out", "")),
		g("escapes", "echo 'coverage: 100.0%'", cont("escape/cover.out", "")),
		g("no-number", "echo 'coverage: 100.0%'; echo none > n.txt", cont("n.txt", "")),
		g("fails-no-value", "echo 'coverage: 100.0%'; exit 1", cont("gone.out", "")),
	}}
	got := map[string]Result{}
	for _, r := range Measure(context.Background(), f, Options{Dir: dir}).Goals {
		got[r.GoalID] = r
	}
	for id, want := range map[string]struct {
		result string
		value  float64 // -1: none
		reason string
	}{
		"profile":          {Fail, 25, "value 25 is on the wrong side of the threshold 50 (higher is better)"},
		"fails-with-value": {Fail, 100, ""},
		"pattern":          {Fail, 7, "value 7 is on the wrong side of the threshold 50 (higher is better)"},
		"in-a-dir":         {Pass, 64, ""},
		"stale":            {Fail, -1, "no value in stale.out (not written by the check)"},
		"touched":          {Pass, 100, ""},
		"old-mtime":        {Fail, -1, "no value in old.out (not written by the check)"},
		"missing":          {Fail, -1, "no value in missing.out (the check wrote no such file)"},
		"symlink":          {Fail, -1, "no value in link.out (a symbolic link, not a file)"},
		"not-a-file":       {Fail, -1, "no value in a-dir.out (not a regular file)"},
		"big":              {Fail, -1, "no value in big.out (larger than 4 MiB)"},
		"escapes":          {Fail, -1, "no value in escape/cover.out (unreadable: path escapes from parent)"},
		"no-number":        {Fail, -1, "no value in n.txt (no number in it)"},
		"fails-no-value":   {Fail, -1, ""},
	} {
		r := got[id]
		v := -1.0
		if r.Value != nil {
			v = *r.Value
		}
		if r.Result != want.result || v != want.value || r.Reason != want.reason {
			t.Errorf("%s: %s, value %v, reason %q; want %s, %v, %q", id, r.Result, v, r.Reason, want.result, want.value, want.reason)
		}
	}
}

// A file is the check's when it is new, another, or changed, and not
// stamped before the check started.
func TestWritten(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "f")
	if err := os.WriteFile(name, []byte("1"), 0o644); err != nil {
		t.Fatal(err)
	}
	before, _ := os.Lstat(name)
	start := time.Now()
	if written(before, before, start) {
		t.Error("a file as it was before the check counts as written")
	}
	if !written(nil, before, start) {
		t.Error("a file new since the check started does not count as written")
	}
	future := before.ModTime().Add(time.Hour)
	if err := os.Chtimes(name, future, future); err != nil {
		t.Fatal(err)
	}
	after, _ := os.Lstat(name)
	if !written(before, after, start) {
		t.Error("a file changed during the check does not count as written")
	}
	if written(after, after, start) {
		t.Error("a file stamped in the future and left as it was counts as written")
	}
	old := start.Add(-time.Hour)
	if err := os.Chtimes(name, old, old); err != nil {
		t.Fatal(err)
	}
	after, _ = os.Lstat(name)
	if written(nil, after, start) {
		t.Error("a file stamped before the check started counts as written")
	}
}
