package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// fixture reads a runner's real output from testdata/census (see its
// README for how each was made).
func fixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "census", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkCensus fails t unless c keeps the promises of a Census: sorted,
// unique, disjoint lists of bounded, valid, non-empty names.
func checkCensus(t testing.TB, c *Census) {
	t.Helper()
	if c == nil {
		t.Fatal("nil census")
	}
	seen := map[string]string{}
	for outcome, list := range map[string][]string{"passed": c.Passed, "failed": c.Failed, "skipped": c.Skipped} {
		if len(list) > MaxNames {
			t.Errorf("%d %s names, more than %d", len(list), outcome, MaxNames)
		}
		for i, name := range list {
			if i > 0 && list[i-1] >= name {
				t.Errorf("%s: %q before %q: not sorted and unique", outcome, list[i-1], name)
			}
			if name == "" || len(name) > MaxNameBytes+len("…") || !utf8.ValidString(name) {
				t.Errorf("%s: name %q (%d bytes) is empty, too long or invalid", outcome, name, len(name))
			}
			if other, ok := seen[name]; ok {
				t.Errorf("%q is both %s and %s", name, other, outcome)
			}
			seen[name] = outcome
		}
	}
	for i, name := range c.Groups {
		if i > 0 && c.Groups[i-1] >= name {
			t.Errorf("groups: %q before %q: not sorted and unique", c.Groups[i-1], name)
		}
		if _, ok := seen[name]; !ok {
			t.Errorf("group %q is in no list", name)
		}
	}
}

func TestParseGoTestJSON(t *testing.T) {
	var text strings.Builder
	c, err := ParseGoTestJSON(bytes.NewReader(fixture(t, "go.json")), &text)
	if err != nil {
		t.Fatal(err)
	}
	checkCensus(t, c)
	want := &Census{
		Runner: "go",
		Passed: []string{"example.com/m.TestPass", "example.com/m.TestSub/case_1", "example.com/m/exit3.TestFirst", "example.com/m/sysexit.TestFirst"},
		// TestExits of exit3 called os.Exit(3) and never reported; the
		// one of sysexit called syscall.Exit(0), and test2json gave it
		// its package's pass. Neither finished. The package that did not
		// build fails under its path; exits (a TestMain that exits 0)
		// and initexit (an init that exits 0) passed and ran nothing.
		Failed:  []string{"example.com/m.TestFail", "example.com/m.TestSub", "example.com/m.TestSub/case_2", "example.com/m/broken", "example.com/m/exit3.TestExits", "example.com/m/sysexit.TestExits"},
		Skipped: []string{"example.com/m.TestSkip"},
		Groups:  []string{"example.com/m/broken"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("census\n%+v\nwant\n%+v", c, want)
	}
	// The text is what go test without -v prints: the output of the tests
	// that failed or did not finish, the packages' own lines; not what
	// passing tests printed, nor -v's progress.
	for _, line := range []string{"# example.com/m/broken [example.com/m/broken.test]\n", "    m_test.go:13: Add(2, 2) = 4, want 5\n", "ok  \texample.com/m/exits\t", "--- FAIL: TestFail"} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("text lacks %q:\n%s", line, text.String())
		}
	}
	for _, line := range []string{"=== RUN", "--- PASS", "\nPASS\n"} {
		if strings.Contains("\n"+text.String(), line) {
			t.Errorf("text has %q:\n%s", line, text.String())
		}
	}
}

func TestParseGoTestJSONText(t *testing.T) {
	// make echoes its command and reports the failure, around go's events.
	var text strings.Builder
	c, err := ParseGoTestJSON(bytes.NewReader(fixture(t, "go-make.txt")), &text)
	if err != nil {
		t.Fatal(err)
	}
	want := &Census{Runner: "go", Failed: []string{"./nothing/...", "example.com/m/broken"}, Groups: []string{"./nothing/...", "example.com/m/broken"}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("census %+v, want %+v", c, want)
	}
	got := text.String()
	for _, line := range []string{"make: running the tests\n", "go test -trimpath -json ./exits ./broken ./nothing/... 2>&1\n", "make: *** [Makefile:3: test] Error 1\n",
		"pattern ./nothing/...: lstat ./nothing/: no such file or directory\n", "ok  \texample.com/m/exits\t"} {
		if !strings.Contains(got, line) {
			t.Errorf("text lacks %q:\n%s", line, got)
		}
	}
	if strings.Contains(got, `"Action"`) {
		t.Errorf("an event copied as text:\n%s", got)
	}
}

func TestParseGoTestJSONEvents(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     Census
	}{
		{"last outcome wins (-count=2)",
			`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p"}
`, Census{Passed: []string{"p.TestA"}}},
		{"run again, never finished",
			`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"p"}
`, Census{Failed: []string{"p.TestA"}}},
		{"a package that fails after its tests pass (TestMain exits 1)",
			`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"fail","Package":"p"}
`, Census{Passed: []string{"p.TestA"}, Failed: []string{"p"}, Groups: []string{"p"}}},
		{"a benchmark reports nothing unless it logs or fails",
			`{"Action":"run","Package":"p","Test":"BenchmarkX"}
{"Action":"output","Package":"p","Test":"BenchmarkX","Output":"BenchmarkX-2 \t 10\t 71.20 ns/op\n"}
{"Action":"run","Package":"p","Test":"BenchmarkY"}
{"Action":"fail","Package":"p","Test":"BenchmarkY"}
{"Action":"fail","Package":"p"}
`, Census{Failed: []string{"p.BenchmarkY"}}},
		{"a stream cut short",
			`{"Action":"run","Package":"p","Test":"TestA"}
{"Action":"pass","Package":"p","Test":"TestA"}
{"Action":"run","Package":"p","Test":"TestB"}
{"Action":"output","Package":"p","Test":"TestB","Output":"=== RUN   TestB\n"}`, Census{Passed: []string{"p.TestA"}, Failed: []string{"p.TestB"}}},
		{"not events",
			"{\"Action\":\n{}\n{\"Test\":\"TestA\"}\n[1]\n\n", Census{}},
	} {
		c, err := ParseGoTestJSON(strings.NewReader(tt.in), nil)
		if err != nil {
			t.Fatal(err)
		}
		checkCensus(t, c)
		tt.want.Runner = "go"
		if !reflect.DeepEqual(*c, tt.want) {
			t.Errorf("%s: census %+v, want %+v", tt.name, *c, tt.want)
		}
	}
}

func TestParseGoTestJSONLongLines(t *testing.T) {
	// A line over the bound is copied cut short, once; a long event's
	// Output whole; a last line without a newline as it is.
	long := strings.Repeat("é", maxLine) // twice the bound in bytes
	event, _ := json.Marshal(goEvent{Action: "output", Package: "p", Test: "TestA", Output: strings.Repeat("x", 100_000) + "\n"})
	in := "before\n" + long + "\n" + string(event) + "\n" + `{"Action":"fail","Package":"p","Test":"TestA"}` + "\n" + `{"Action":"fail","Package":"p"}` + "\nafter"
	var text strings.Builder
	c, err := ParseGoTestJSON(strings.NewReader(in), &text)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c.Failed, []string{"p.TestA"}) {
		t.Errorf("census %+v", c)
	}
	want := "before\n" + long[:maxLine] + "…\n" + strings.Repeat("x", 100_000) + "\nafter"
	if text.String() != want {
		t.Errorf("text of %d bytes, want %d", text.Len(), len(want))
	}
}

type failingWriter struct{ n int }

func (w *failingWriter) Write(b []byte) (int, error) {
	w.n++
	return 0, errors.New("disk full")
}

type failingReader struct{ r *strings.Reader }

func (r failingReader) Read(b []byte) (int, error) {
	if r.r.Len() == 0 {
		return 0, errors.New("connection reset")
	}
	return r.r.Read(b)
}

func TestParseGoTestJSONErrors(t *testing.T) {
	in := `{"Action":"output","Package":"p","Test":"TestA","Output":"hi\n"}
{"Action":"fail","Package":"p","Test":"TestA"}
{"Action":"output","Package":"p","Test":"TestB","Output":"bye\n"}
{"Action":"pass","Package":"p","Test":"TestB"}
{"Action":"fail","Package":"p"}
`
	// A writer that fails stops the text, not the reading.
	w := &failingWriter{}
	c, err := ParseGoTestJSON(strings.NewReader(in), w)
	if err == nil || err.Error() != "disk full" || w.n != 1 || len(c.Passed) != 1 {
		t.Errorf("failing writer: %v, %d writes, %+v", err, w.n, c)
	}
	// A read error is returned with what was read before it.
	c, err = ParseGoTestJSON(failingReader{strings.NewReader(in)}, nil)
	if err == nil || err.Error() != "connection reset" || len(c.Passed) != 1 || len(c.Failed) != 1 {
		t.Errorf("failing reader: %v, %+v", err, c)
	}
}

func TestBoundName(t *testing.T) {
	long := strings.Repeat("a", MaxNameBytes-1) + "é" + "tail"
	for _, tt := range []struct{ in, want string }{
		{"short", "short"},
		{strings.Repeat("a", MaxNameBytes), strings.Repeat("a", MaxNameBytes)},
		{long, strings.Repeat("a", MaxNameBytes-1) + "…"},
		{"bad \xff name", "bad \uFFFD name"},
		{strings.Repeat("\xff", MaxNameBytes+1), "\uFFFD…"}, // a run of invalid bytes is one U+FFFD
		{strings.Repeat("a\xff", MaxNameBytes/2), cutRunes(strings.Repeat("a\uFFFD", MaxNameBytes/2), MaxNameBytes) + "…"},
	} {
		got := boundName(tt.in)
		if got != tt.want || !utf8.ValidString(got) || len(got) > MaxNameBytes+len("…") {
			t.Errorf("boundName(%.20q…) = %.20q… (%d bytes), want %.20q… (%d bytes)", tt.in, got, len(got), tt.want, len(tt.want))
		}
	}
}

func TestTallyBounds(t *testing.T) {
	tl := newTally("go")
	for i := range MaxNames + 10 {
		tl.set("n"+strconv.Itoa(i), passed)
	}
	tl.set("failing", failed)
	c := tl.census()
	if len(c.Passed) != MaxNames || !c.Truncated || !slices.Equal(c.Failed, []string{"failing"}) {
		t.Errorf("%d passed, truncated %v, failed %v", len(c.Passed), c.Truncated, c.Failed)
	}
	if c.Summary() != "100000 passed, 1 failed, 0 skipped (truncated)" {
		t.Errorf("summary %q", c.Summary())
	}
}

func TestVanished(t *testing.T) {
	before := &Census{Passed: []string{"a", "b", "c", "d"}, Failed: []string{"e"}}
	after := &Census{Passed: []string{"a", "e", "f"}, Failed: []string{"b"}, Skipped: []string{"c"}}
	if got := before.Vanished(after); !slices.Equal(got, []string{"b", "c", "d"}) {
		t.Errorf("vanished %v", got)
	}
	if !Dropped(before, after) || Dropped(after, before) || Dropped(before, before) {
		t.Error("a drop is fewer passed after than before")
	}
	// A rename vanishes a test without a drop.
	renamed := &Census{Passed: []string{"a", "b", "c", "z"}}
	if Dropped(before, renamed) || !slices.Equal(before.Vanished(renamed), []string{"d"}) {
		t.Errorf("renamed: dropped %v, vanished %v", Dropped(before, renamed), before.Vanished(renamed))
	}
	// Nothing passed where there is no census.
	if !Dropped(before, nil) || Dropped(nil, before) || !slices.Equal(before.Vanished(nil), before.Passed) || (*Census)(nil).Vanished(after) != nil {
		t.Error("nil census")
	}
	// A census read back from JSON is not trusted to be sorted.
	if got := (&Census{Passed: []string{"d", "a", "d"}}).Vanished(after); !slices.Equal(got, []string{"d"}) {
		t.Errorf("unsorted: %v", got)
	}
	if s := before.Summary(); s != "4 passed, 1 failed, 0 skipped" {
		t.Errorf("summary %q", s)
	}
}

// A test that failed at the start and is neither passed nor failed at the
// finish is hidden; a package or binary that failed as a whole is not.
func TestHidden(t *testing.T) {
	before := &Census{
		Passed: []string{"p.TestOK"},
		Failed: []string{"p.TestAbsent", "p.TestFixed", "p.TestSkipped", "p.TestStill", "q", "unittests src/lib.rs"},
		Groups: []string{"q", "unittests src/lib.rs"},
	}
	after := &Census{
		Passed:  []string{"p.TestFixed", "p.TestOK", "q.TestNew"},
		Failed:  []string{"p.TestStill"},
		Skipped: []string{"p.TestSkipped"},
	}
	if got := before.Hidden(after); !slices.Equal(got, []string{"p.TestAbsent", "p.TestSkipped"}) {
		t.Errorf("hidden %v", got)
	}
	if got := before.Hidden(nil); !slices.Equal(got, []string{"p.TestAbsent", "p.TestFixed", "p.TestSkipped", "p.TestStill"}) {
		t.Errorf("hidden from no census %v", got)
	}
	if (*Census)(nil).Hidden(after) != nil || after.Hidden(after) != nil || before.Hidden(before) != nil {
		t.Error("nothing failed, or nothing changed: nothing hidden")
	}
	// A census read back from JSON is not trusted to be sorted.
	if got := (&Census{Failed: []string{"b", "a", "b"}}).Hidden(nil); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("unsorted: %v", got)
	}
	// Merged, a group stays a group.
	m := Merge(&Census{Runner: "go", Failed: []string{"q"}, Groups: []string{"q"}}, &Census{Runner: "junit", Passed: []string{"q", "r"}}, nil)
	if !slices.Equal(m.Groups, []string{"q"}) || !slices.Equal(m.Failed, []string{"q"}) || m.Runner != "go+junit" {
		t.Errorf("merged %+v", m)
	}
}

func TestParseJUnitXML(t *testing.T) {
	for _, tt := range []struct {
		fixture string
		want    Census
	}{
		// Written by hand in pytest's format (its junitxml.py), pytest
		// not being installed where the fixtures were made.
		{"pytest.xml", Census{
			Passed:  []string{"tests.test_x.TestClass::test_method", "tests.test_x::test_param[1-2]", "tests.test_x::test_param[2-3]", "tests.test_x::test_y"},
			Failed:  []string{"tests.test_broken", "tests.test_x::test_fails", "tests.test_x::test_setup_error"},
			Skipped: []string{"tests.test_x::test_skipped", "tests.test_x::test_xfail"},
			// The module pytest could not collect.
			Groups: []string{"tests.test_broken"},
		}},
		// node 20's junit reporter: a test with subtests and a describe
		// are testsuites, and the classname of every testcase is "test".
		{"node-junit.xml", Census{
			Passed:  []string{"test::adds", "test::child passes", "test::divides", "test::multiplies"},
			Failed:  []string{"test::child fails", "test::fails"},
			Skipped: []string{"test::by zero", "test::skipped", "test::todo"},
		}},
	} {
		c, err := ParseJUnitXML(fixture(t, tt.fixture))
		if err != nil {
			t.Fatalf("%s: %v", tt.fixture, err)
		}
		checkCensus(t, c)
		tt.want.Runner = "junit"
		if !reflect.DeepEqual(*c, tt.want) {
			t.Errorf("%s: census\n%+v\nwant\n%+v", tt.fixture, *c, tt.want)
		}
	}
}

func TestParseJUnitXMLDocuments(t *testing.T) {
	deep := "<testsuites>" + strings.Repeat("<testsuite>", 62) + `<testcase name="a"/>` + strings.Repeat("</testsuite>", 62) + "</testsuites>"
	tooDeep := "<testsuites>" + strings.Repeat("<testsuite>", 64) + strings.Repeat("</testsuite>", 64) + "</testsuites>"
	for _, tt := range []struct {
		name, doc string
		want      *Census // nil: an error
	}{
		{"nested 64 deep", deep, &Census{Passed: []string{"a"}, Groups: []string{"a"}}}, // no classname: a group
		{"nested 65 deep", tooDeep, nil},
		{"a testsuite root", `<testsuite name="x"><testcase classname="c" name="a"><system-err/></testcase><testcase name="a" classname="c"><error/></testcase></testsuite>`,
			&Census{Failed: []string{"c::a"}}},
		{"classname alone, no name, a testcase in a testcase", `<testsuites><testcase classname="c"><testcase name="inner"/><x><failure/></x></testcase><testcase/></testsuites>`,
			&Census{Passed: []string{"c"}}},
		{"an empty report", `<?xml version="1.0"?><testsuites/>`, &Census{}},
		{"cut short", `<testsuites><testcase name="a"/><testcase name="b">`, nil},
		{"not JUnit", `<html><testcase name="a"/></html>`, nil},
		{"no root", ``, nil},
		{"a second root", `<testsuites><testcase name="a"/></testsuites><testsuites/>`, nil},
		{"an undefined entity", `<testsuites><testcase name="&nbsp;"/></testsuites>`, nil},
		{"entities defined in a doctype", `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;">]><testsuites><testcase name="&lol2;"/></testsuites>`, nil},
		{"an external entity", `<?xml version="1.0"?><!DOCTYPE t [<!ENTITY x SYSTEM "file:///etc/passwd">]><testsuites><testcase name="&x;"/></testsuites>`, nil},
		{"another encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><testsuites/>`, nil},
	} {
		c, err := ParseJUnitXML([]byte(tt.doc))
		if tt.want == nil {
			if err == nil {
				t.Errorf("%s: no error, census %+v", tt.name, c)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		checkCensus(t, c)
		tt.want.Runner = "junit"
		if !reflect.DeepEqual(c, tt.want) {
			t.Errorf("%s: census %+v, want %+v", tt.name, c, tt.want)
		}
	}
	if _, err := ParseJUnitXML([]byte(`<html/>`)); !errors.Is(err, ErrNotJUnit) {
		t.Errorf("not JUnit: %v", err)
	}
}

func TestParseCargoTest(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		want      Census
	}{
		// cargo 1.95 on a crate with unit tests (one should_panic, one
		// ignored with a reason), an integration test of the same short
		// name and doc tests (one should_panic, one ignored).
		{"cargo.txt", string(fixture(t, "cargo.txt")), Census{
			Passed:  []string{"adds", "src/lib.rs - add (line 3)", "src/lib.rs - div (line 12)", "tests::adds", "tests::divides_by_zero"},
			Failed:  []string{"tests::fails"},
			Skipped: []string{"src/lib.rs - div (line 16)", "tests::network", "tests::slow"},
		}},
		// A test that calls std::process::exit(0): the other tests never
		// report, and cargo exits 0.
		{"cargo-exit.txt", string(fixture(t, "cargo-exit.txt")), Census{
			Passed: []string{"tests::a_first"},
			Failed: []string{"unittests src/lib.rs"},
			Groups: []string{"unittests src/lib.rs"},
		}},
		{"a name from two binaries", "running 1 test\ntest a ... ok\n\ntest result: ok.\n\nrunning 2 tests\ntest a ... FAILED\ntest b ... ignored\n\ntest result: FAILED.\n" +
			"running 1 test\ntest b ... ok\ntest result: ok.\n", Census{Passed: []string{"b"}, Failed: []string{"a"}}},
		{"raw libtest, cut short", "\r\nrunning 2 tests\r\ntest a ... ok\r\n", Census{Passed: []string{"a"}, Failed: []string{"test binary"}, Groups: []string{"test binary"}}},
		{"colours, times, padding and other lines",
			"running 4 tests\ntest a ... \x1b[32mok\x1b[0m\ntest b ... ok <0.001s>\ntest c ... FAILED (time limit exceeded)\ntest bench_x   ... bench:       1,234 ns/iter (+/- 5)\n" +
				"test d has been running for over 60 seconds\ntest e ... some output\nok\ntest result: FAILED.\n",
			Census{Passed: []string{"a", "b"}, Failed: []string{"c"}}},
	} {
		c := ParseCargoTest(tt.out)
		checkCensus(t, c)
		tt.want.Runner = "cargo"
		if !reflect.DeepEqual(*c, tt.want) {
			t.Errorf("%s: census\n%+v\nwant\n%+v", tt.name, *c, tt.want)
		}
	}
}

func TestParseTAP(t *testing.T) {
	for _, tt := range []struct {
		name, out string
		want      Census
	}{
		// node 20's tap reporter on the file of node-junit.xml.
		{"node.tap", string(fixture(t, "node.tap")), Census{
			Passed:  []string{"adds", "math", "math > division", "math > division > divides", "math > multiplies", "parent > child passes"},
			Failed:  []string{"fails", "parent", "parent > child fails"},
			Skipped: []string{"math > division > by zero", "skipped", "todo"},
		}},
		// A file whose test calls process.exit(0) is one passing test
		// named by the file's path, a group; its tests are not listed. A
		// test's console.log is a comment, whatever it prints.
		{"node-exit.tap", string(fixture(t, "node-exit.tap")), Census{
			Passed: []string{"/src/exit.test.mjs", `issue #12 \ back`},
			Groups: []string{"/src/exit.test.mjs"},
		}},
		{"a file that failed to load, and names like paths",
			"not ok 1 - /src/a.test.mjs\nnot ok 2 - C:\\src\\b.test.ts\nnot ok 3 - file:///src/c.test.js\nok 4 - src/d.test.js\nok 5 - /usr/bin\n# Subtest: /src/e.test.js\n    ok 1 - inner\n",
			Census{Passed: []string{"/src/e.test.js > inner", "/usr/bin", "src/d.test.js"}, Failed: []string{"/src/a.test.mjs", `C:\src\b.test.ts`, "file:///src/c.test.js"},
				Groups: []string{"/src/a.test.mjs", `C:\src\b.test.ts`, "file:///src/c.test.js"}}},
		{"TAP 14 without Subtest comments", "TAP version 14\n    ok 1 - a\n    not ok 2 - b # todo later\n        ok 1 - deep\n    ok 3 - c\n    1..3\nnot ok 1 - parent\nok 2 # SKIP no name\nok 3 - s # skipped: flaky\nok 4 - t # TODO done already\nok 5 - slow # time=12.5ms\nok 6 - issue \\#12 is fixed\n1..6\n",
			Census{Passed: []string{"issue #12 is fixed", "parent > a", "parent > c", "parent > c > deep", "slow", "t"}, Failed: []string{"parent"}, Skipped: []string{"parent > b", "s"}}},
		{"YAML blocks and their ends",
			"ok 1 - a\n  ---\n  error: |-\n    ok 9 - inside\n    ...\n  not ok 10 - inside too\n  ...\nnot ok 2 - b\n  ---\n  unclosed: true\nok 3 - c\n---\nok 4 - d\n",
			Census{Passed: []string{"a", "c", "d"}, Failed: []string{"b"}}},
		{"parents that never reported", "# Subtest: file\n    # Subtest: suite\n        ok 1 - x\n    ok 1 - suite\n    # Subtest: other\n        not ok 1 - z\n",
			Census{Passed: []string{"file > suite", "file > suite > x"}, Failed: []string{"file > other > z"}}},
		{"a file that never reported, then another", "# Subtest: one\n    ok 1 - a\n# Subtest: two\n    ok 1 - b\nok 2 - two\n    ok 1 - c\n",
			Census{Passed: []string{"c", "one > a", "two", "two > b"}}},
		{"colours and CRLF", "\x1b[32mok 1 - a\x1b[0m\r\nnot ok 2 - b\r\n", Census{Passed: []string{"a"}, Failed: []string{"b"}}},
	} {
		c := ParseTAP(tt.out)
		checkCensus(t, c)
		tt.want.Runner = "tap"
		if !reflect.DeepEqual(*c, tt.want) {
			t.Errorf("%s: census\n%+v\nwant\n%+v", tt.name, *c, tt.want)
		}
	}
}

// A TestMain that exits 0 before m.Run: go test passes the package, with
// no test run, and the census counts the drop.
func ExampleDropped() {
	before, _ := ParseGoTestJSON(strings.NewReader(`{"Action":"run","Package":"example.com/m","Test":"TestA"}
{"Action":"pass","Package":"example.com/m","Test":"TestA"}
{"Action":"run","Package":"example.com/m","Test":"TestB"}
{"Action":"pass","Package":"example.com/m","Test":"TestB"}
{"Action":"pass","Package":"example.com/m"}
`), nil)
	after, _ := ParseGoTestJSON(strings.NewReader(`{"Action":"output","Package":"example.com/m","Output":"ok  \texample.com/m\t0.007s\n"}
{"Action":"pass","Package":"example.com/m"}
`), nil)
	fmt.Println(before.Summary(), "→", after.Summary())
	fmt.Println(Dropped(before, after), before.Vanished(after))
	// Output:
	// 2 passed, 0 failed, 0 skipped → 0 passed, 0 failed, 0 skipped
	// true [example.com/m.TestA example.com/m.TestB]
}
