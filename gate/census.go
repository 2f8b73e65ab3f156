package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/goals"
)

// The bounds of a census, whose every name is read from what the tested
// code printed: a name longer than MaxNameBytes keeps its first bytes (cut
// on a rune boundary) followed by "…", and each outcome keeps at most
// MaxNames names.
const (
	MaxNameBytes = 512
	MaxNames     = 100_000
)

// Census is what a test runner said of the tests it ran: each test's name
// by its outcome. The regression gate counts the tests that passed at the
// start of a cycle and at its finish (see Dropped and Vanished), so that
// tests that silently stop running (a TestMain that exits 0, an init that
// exits, tests deselected) count against the cycle; and it names the
// tests that failed at the start and are not told of at the finish (see
// Hidden), so that a failing test cannot be made to disappear.
//
// A name is what the runner calls the test, as the parser of its format
// documents it: valid UTF-8 (invalid bytes become U+FFFD), never empty, at
// most MaxNameBytes plus len("…") bytes, escaped for nothing (callers
// escape for a terminal or Markdown). A name has one outcome: the lists
// are disjoint, each sorted and without repeats.
type Census struct {
	Runner  string   `json:"runner"` // "go", "junit", "jest", "cargo" or "tap"
	Passed  []string `json:"passed,omitempty"`
	Failed  []string `json:"failed,omitempty"`
	Skipped []string `json:"skipped,omitempty"`
	// Groups are the names of the lists that are no test but a package or
	// a test binary as a whole, as the parser of its runner documents
	// them (a Go package whose build failed, a cargo test binary cut
	// short, a pytest module that could not be collected, a node test
	// file that failed outside its tests), sorted. They count in Dropped
	// and Vanished as any name does, and never as a hidden test: a
	// package that did not build at the start is not one that hides a
	// test when it builds.
	Groups []string `json:"groups,omitempty"`
	// Truncated is true when names were left out: an outcome had more
	// than MaxNames of them.
	Truncated bool `json:"truncated,omitempty"`
}

// Dropped reports whether fewer tests passed after than before: the drop
// the judge counts as a regression, whichever tests it was (Vanished names
// them). A nil census is one where no test passed.
func Dropped(before, after *Census) bool {
	return after.passed() < before.passed()
}

// Vanished returns the names of the tests that passed in before and do not
// pass in after (they are absent, failed or skipped), sorted: the tests
// the judge names when it counts a drop (see Dropped). Tests can vanish
// without a drop (one renamed, or replaced by another); only a drop counts
// as a regression. A nil census is one where no test passed.
func (before *Census) Vanished(after *Census) []string {
	if before == nil {
		return nil
	}
	now := map[string]bool{}
	if after != nil {
		for _, name := range after.Passed {
			now[name] = true
		}
	}
	var out []string
	for _, name := range before.Passed {
		if !now[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out) // a census read back from JSON is not known to be sorted
	return slices.Compact(out)
}

// Hidden returns the names of the tests that failed in before and neither
// pass nor fail in after (they are absent or skipped), sorted, groups of
// before (see Groups) left out: a failing test the cycle made disappear
// (product code that deselects it, or skips it) hides that the code it
// tests is still broken. The judge counts them as a regression when the
// gate's commands passed. A nil census is one where no test ran.
func (before *Census) Hidden(after *Census) []string {
	if before == nil {
		return nil
	}
	told := map[string]bool{}
	if after != nil {
		for _, list := range [][]string{after.Passed, after.Failed} {
			for _, name := range list {
				told[name] = true
			}
		}
	}
	group := map[string]bool{}
	for _, name := range before.Groups {
		group[name] = true
	}
	var out []string
	for _, name := range before.Failed {
		if !told[name] && !group[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out) // a census read back from JSON is not known to be sorted
	return slices.Compact(out)
}

// Summary counts the census's names by outcome, as "12 passed, 1 failed,
// 2 skipped", with " (truncated)" after it when names were left out.
func (c *Census) Summary() string {
	if c == nil {
		c = &Census{}
	}
	s := strconv.Itoa(len(c.Passed)) + " passed, " + strconv.Itoa(len(c.Failed)) + " failed, " + strconv.Itoa(len(c.Skipped)) + " skipped"
	if c.Truncated {
		s += " (truncated)"
	}
	return s
}

func (c *Census) passed() int {
	if c == nil {
		return 0
	}
	return len(c.Passed)
}

// outcome is what a tally holds of a test. started is a test that began and
// has said nothing more (go test only); the census counts it as failed.
type outcome uint8

const (
	started outcome = iota
	skipped
	passed
	failed
)

// tally collects the outcome of each name a parser reads, within the
// bounds of a census.
type tally struct {
	runner    string
	of        map[string]outcome
	count     [failed + 1]int
	groups    map[string]bool
	truncated bool
}

func newTally(runner string) *tally {
	return &tally{runner: runner, of: map[string]outcome{}, groups: map[string]bool{}}
}

// group marks name, given its outcome already, as a group (see
// Census.Groups).
func (t *tally) group(name string) {
	if name = boundName(name); name != "" {
		t.groups[name] = true
	}
}

// set gives name the outcome o, whatever it had. A name that would be one
// too many of its outcome is left out.
func (t *tally) set(name string, o outcome) {
	name = boundName(name)
	if name == "" {
		return
	}
	old, had := t.of[name]
	if had && old == o {
		return
	}
	if had {
		t.count[old]--
		delete(t.of, name)
	}
	if t.count[o] >= MaxNames {
		t.truncated = true
		return
	}
	if !had {
		name = strings.Clone(name) // not a window on the runner's whole output
	}
	t.of[name] = o
	t.count[o]++
}

// merge gives name the outcome o unless it has a stronger one: a failure
// outweighs a pass, which outweighs a skip. It serves runners that may
// report one name more than once (two test binaries, two files).
func (t *tally) merge(name string, o outcome) {
	if old, had := t.of[boundName(name)]; had && old >= o {
		return
	}
	t.set(name, o)
}

// census is the tally as a Census; a test that started and said nothing
// more is failed.
func (t *tally) census() *Census {
	c := &Census{Runner: t.runner, Truncated: t.truncated}
	for name, o := range t.of {
		switch o {
		case passed:
			c.Passed = append(c.Passed, name)
		case skipped:
			c.Skipped = append(c.Skipped, name)
		default:
			c.Failed = append(c.Failed, name)
		}
	}
	for _, list := range []*[]string{&c.Passed, &c.Failed, &c.Skipped} {
		slices.Sort(*list)
		if len(*list) > MaxNames { // started and failed together
			*list = (*list)[:MaxNames]
			c.Truncated = true
		}
	}
	for name := range t.groups {
		o, ok := t.of[name]
		list := c.Failed
		switch o {
		case passed:
			list = c.Passed
		case skipped:
			list = c.Skipped
		}
		if _, kept := slices.BinarySearch(list, name); ok && kept {
			c.Groups = append(c.Groups, name)
		}
	}
	slices.Sort(c.Groups)
	return c
}

// boundName is name as valid UTF-8 (invalid bytes replaced, as
// encoding/json would write them) and within MaxNameBytes, cut on a rune
// boundary and marked with "…".
func boundName(name string) string {
	long := len(name) > MaxNameBytes
	if long {
		name = cutRunes(name, MaxNameBytes)
	}
	if !utf8.ValidString(name) {
		name = strings.ToValidUTF8(name, "\uFFFD")
		if len(name) > MaxNameBytes { // a replacement is longer than the byte it replaces
			name, long = cutRunes(name, MaxNameBytes), true
		}
	}
	if long {
		name += "…"
	}
	return name
}

// cutRunes is the longest start of s within n bytes that does not end in
// the middle of a rune (of valid UTF-8; invalid bytes may be cut anywhere).
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for i := 0; i < utf8.UTFMax-1 && n > 0 && !utf8.RuneStart(s[n]); i++ {
		n--
	}
	return s[:n]
}

// maxLine is the longest line ParseGoTestJSON holds. A longer one is not
// an event (test2json cuts a test's output into events of a few KiB): it
// is copied to the text cut short, its first maxLine bytes and "…".
const maxLine = 1 << 20

// goEvent is what the census reads of an event of go test -json: a
// TestEvent of test2json, or a BuildEvent of the build.
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	FailedBuild string
}

// goPackage is what the census knows of a package tested.
type goPackage struct {
	result      string // its own pass, fail or skip; "" until it has one
	failedBuild bool
	failing     bool   // a test of it failed or did not finish
	last        string // the test its last event passed or skipped, if its last event did
}

type goTest struct {
	pkg *goPackage
	o   outcome
}

// ParseGoTestJSON reads the event stream of go test -json (cmd/test2json's
// TestEvent, and the BuildEvent of the build) and writes to text what
// plain go test (without -v) would have printed: the output of each test
// that failed or did not finish, once it is known (its "=== RUN" lines
// left out), the packages' own output (the build's errors, "ok" and
// "FAIL" lines; not the "PASS" line go test prints only with -v), and
// every line that is not an event (a Makefile's echo, an error go printed
// before any test, another tool's output) unchanged, but for a line over 1
// MiB, of which text gets the first MiB and "…". What a test printed is
// held until its outcome, to 1 MiB a test and 16 MiB in all. A nil text
// discards it.
//
// A test is named "<package>.<Test>", a subtest with its slash path
// ("example.com/m.TestA/case_1"), and has the outcome of its last pass,
// fail or skip event. A test that ran and never reported an outcome (its
// binary exited or was killed first) is failed, and so is the test a
// package's own result names when the package's last event is that
// result: test2json gives it the name of the test that was running when
// the binary exited 0. A package whose build failed, or that failed with
// no test failing, is failed under its path, a group (Census.Groups). A
// benchmark counts only when
// it reports an outcome, as go test reports one only when it logs or
// fails.
//
// It reads r to its end even when writing text fails, and returns the
// first error of reading r or, after it, of writing text; the census is
// never nil, and holds what was read before a read error.
func ParseGoTestJSON(r io.Reader, text io.Writer) (*Census, error) {
	if text == nil {
		text = io.Discard
	}
	p := &goParser{tally: newTally("go"), pkgs: map[string]*goPackage{}, tests: map[string]goTest{}, text: text, held: map[string][]byte{}}
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	long := false
	var rerr error
	for {
		frag, err := br.ReadSlice('\n')
		if room := maxLine - len(line); len(frag) <= room {
			line = append(line, frag...)
		} else if !long {
			line = append(line, cutRunes(string(frag), room)...)
			long = true
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 {
			p.line(line, long, err == nil)
		}
		line, long = line[:0], false
		if err != nil {
			if err != io.EOF {
				rerr = err
			}
			break
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.held)) {
		p.release(k, true) // a stream cut short: what did not finish
	}
	c := p.census()
	if rerr != nil {
		return c, rerr
	}
	return c, p.werr
}

type goParser struct {
	*tally
	pkgs  map[string]*goPackage
	tests map[string]goTest
	text  io.Writer
	werr  error
	// held is what each test printed, until its outcome says whether
	// plain go test would print it; heldBytes their sum.
	held      map[string][]byte
	heldBytes int
}

// The bounds of what a test's output is held to: per test and in all.
const (
	maxHeldTest = 1 << 20
	maxHeld     = 16 << 20
)

// hold keeps out, printed by the test key, until its outcome.
func (p *goParser) hold(key, out string) {
	if strings.HasPrefix(out, "=== RUN") || strings.HasPrefix(out, "=== PAUSE") || strings.HasPrefix(out, "=== CONT") || strings.HasPrefix(out, "=== NAME") {
		return // -v's progress, not printed without it
	}
	b := p.held[key]
	room := min(maxHeldTest-len(b), maxHeld-p.heldBytes)
	if room <= 0 {
		return
	}
	if len(out) > room {
		out = cutRunes(out, room) + "…\n"
	}
	p.held[key] = append(b, out...)
	p.heldBytes += len(out)
}

// release writes what the test key printed (print), or drops it. Its
// "--- FAIL" line goes first, as go test prints it without -v.
func (p *goParser) release(key string, print bool) {
	if b, ok := p.held[key]; ok {
		if print {
			if i := bytes.Index(b, []byte("--- FAIL:")); i > 0 {
				start := bytes.LastIndexByte(b[:i], '\n') + 1
				if strings.TrimSpace(string(b[start:i])) == "" {
					end := len(b)
					if j := bytes.IndexByte(b[i:], '\n'); j >= 0 {
						end = i + j + 1
					}
					b = slices.Concat(b[start:end], b[:start], b[end:])
				}
			}
			p.write(b)
		}
		p.heldBytes -= len(b)
		delete(p.held, key)
	}
}

// releasePackage writes what the tests of package pkg that did not finish
// printed.
func (p *goParser) releasePackage(pkg string) {
	prefix := pkg + "\x00"
	keys := slices.Sorted(maps.Keys(p.held))
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) {
			p.release(k, true)
		}
	}
}

func (p *goParser) write(b []byte) {
	if p.werr == nil {
		_, p.werr = p.text.Write(b)
	}
}

// line takes one line of input: an event, or text to copy. A long line was
// cut at maxLine; nl says whether it ended in a newline.
func (p *goParser) line(line []byte, long, nl bool) {
	if !long {
		var ev goEvent
		if l := bytes.TrimRight(line, "\r\n"); len(l) > 0 && l[0] == '{' && json.Unmarshal(l, &ev) == nil && ev.Action != "" {
			p.event(ev)
			return
		}
	}
	p.write(line)
	if long {
		p.write([]byte("…"))
		if nl {
			p.write([]byte("\n"))
		}
	}
}

func (p *goParser) event(ev goEvent) {
	key := ev.Package + "\x00" + ev.Test
	switch {
	case ev.Output == "":
	case ev.Test != "":
		p.hold(key, ev.Output)
	case ev.Output == "PASS\n" && ev.Action == "output":
		// a passing package's line, printed only with -v
	default:
		if p.werr == nil {
			_, p.werr = io.WriteString(p.text, ev.Output)
		}
	}
	if ev.Test != "" && (ev.Action == "pass" || ev.Action == "skip" || ev.Action == "fail") {
		p.release(key, ev.Action == "fail")
	} else if ev.Test == "" && (ev.Action == "pass" || ev.Action == "fail") {
		p.releasePackage(ev.Package) // its tests that did not finish
	}
	if ev.Action == "build-output" || ev.Action == "build-fail" {
		return // the package's own fail event follows, with FailedBuild
	}
	pkg := p.pkg(ev.Package)
	if pkg != nil {
		pkg.last = ""
	}
	if ev.Action != "run" && ev.Action != "pass" && ev.Action != "fail" && ev.Action != "skip" {
		return
	}
	if ev.Test == "" {
		if pkg != nil && ev.Action != "run" {
			pkg.result, pkg.failedBuild = ev.Action, ev.FailedBuild != ""
		}
		return
	}
	if ev.Action == "run" && strings.HasPrefix(ev.Test, "Benchmark") {
		return
	}
	name := ev.Test
	if ev.Package != "" {
		name = ev.Package + "." + ev.Test
	}
	name = boundName(name)
	o := started
	switch ev.Action {
	case "pass":
		o = passed
	case "fail":
		o = failed
	case "skip":
		o = skipped
	}
	if _, had := p.tests[name]; !had && len(p.tests) >= 3*MaxNames {
		p.truncated = true
		return
	}
	p.tests[name] = goTest{pkg: pkg, o: o}
	if pkg != nil && (o == passed || o == skipped) {
		pkg.last = name
	}
}

// pkg is the package of an event, nil when it has none or there are too
// many to keep.
func (p *goParser) pkg(path string) *goPackage {
	path = boundName(path)
	if path == "" {
		return nil
	}
	if pkg, ok := p.pkgs[path]; ok {
		return pkg
	}
	if len(p.pkgs) >= MaxNames {
		p.truncated = true
		return nil
	}
	pkg := &goPackage{}
	p.pkgs[path] = pkg
	return pkg
}

func (p *goParser) census() *Census {
	for _, pkg := range p.pkgs {
		if t, ok := p.tests[pkg.last]; ok && pkg.result == "" {
			t.o = started // the package's result, given to the test that was running
			p.tests[pkg.last] = t
		}
	}
	names := slices.Sorted(maps.Keys(p.tests)) // the same names kept, whatever the map's order
	for _, name := range names {
		t := p.tests[name]
		if (t.o == started || t.o == failed) && t.pkg != nil {
			t.pkg.failing = true
		}
		p.set(name, t.o)
	}
	for _, path := range slices.Sorted(maps.Keys(p.pkgs)) {
		if pkg := p.pkgs[path]; pkg.result == "fail" && (pkg.failedBuild || !pkg.failing) {
			p.set(path, failed)
			p.group(path)
		}
	}
	return p.tally.census()
}

// ErrNotJUnit is returned by ParseJUnitXML for data that is no JUnit
// report: a well-formed document whose root is neither <testsuites> nor
// <testsuite>, or one that is not XML before its root (goals.ErrNotJUnit).
var ErrNotJUnit = goals.ErrNotJUnit

// ParseJUnitXML reads a JUnit XML report as pytest --junitxml, jest-junit,
// vitest and node --test-reporter=junit write it, with goals.JUnitCases:
// <testcase> elements in <testsuite> elements (nested or not) under a
// <testsuites> or <testsuite> root. A testcase is named
// "classname::name", or by the one of the two it has (one with neither is
// left out). One with a <skipped> child is skipped (node writes a failing
// todo test as both skipped and failure), else one with a <failure> or
// <error> child is failed, else it passed. A name reported more than once
// (pytest writes a test that fails and errors in teardown twice) has the
// strongest of its outcomes: failed, then passed, then skipped. A
// testcase with a name and no classname is a group (Census.Groups): it is
// how pytest reports a module it could not collect, or skipped whole.
//
// It returns an error, and no census, for a document that is not
// well-formed XML (a report cut short included), one nested deeper than
// 64 elements or with a second root, and ErrNotJUnit (wrapped) for one
// whose root is another element or that has none. It reads nothing but
// data: no entity is defined beyond XML's own five, and nothing external
// is fetched.
func ParseJUnitXML(data []byte) (*Census, error) {
	t := newTally("junit")
	err := goals.JUnitCases(data, func(class, name, result string) {
		o := passed
		switch result {
		case goals.Skip:
			o = skipped
		case goals.Fail:
			o = failed
		}
		t.merge(junitName(class, name), o)
		if class == "" {
			t.group(name) // pytest's module it could not collect
		}
	})
	switch {
	case errors.Is(err, ErrNotJUnit):
		return nil, err
	case err != nil:
		return nil, fmt.Errorf("JUnit XML: %v", err)
	}
	return t.census(), nil
}

// junitName is a testcase's name: "classname::name", or either alone when
// the other is empty.
func junitName(class, name string) string {
	if class == "" || name == "" {
		return class + name
	}
	return class + "::" + name
}

// ParseCargoTest reads the output of cargo test: libtest's lines "test
// <name> ... ok", "... FAILED" and "... ignored" (with or without a
// reason), from every test binary and doc-test run of the output. A name
// is libtest's, without the mode it shows after it (" - should panic",
// " - compile fail", " - compile"), so a doc test keeps its file, item and
// line: "src/lib.rs - add (line 5)". A name two binaries both report has
// the strongest of its outcomes: failed, then passed, then skipped.
//
// A test binary that said "running N tests" and ended without its "test
// result:" line (it exited in the middle, as std::process::exit(0) in a
// test does while cargo still exits 0, or it crashed) is failed under the
// name cargo ran it by ("unittests src/lib.rs", "tests/api.rs",
// "Doc-tests adder"), or "test binary" when the output does not say: a
// group (Census.Groups). Lines are read as a terminal shows them (colours
// and carriage returns applied); benchmarks are left out, and other
// formats (--format json or terse, cargo nextest) give an empty census.
func ParseCargoTest(out string) *Census {
	t := newTally("cargo")
	label, running := "", false
	cutShort := func() {
		if running {
			if label == "" {
				label = "test binary"
			}
			t.merge(label, failed)
			t.group(label)
		}
		running = false
	}
	for line := range strings.Lines(out) {
		line = termLine(line)
		switch trimmed := strings.TrimSpace(line); {
		case strings.HasPrefix(line, "test result: "):
			running = false
		case strings.HasPrefix(line, "test "):
			if name, o, ok := cargoResult(line[len("test "):]); ok {
				t.merge(name, o)
			}
		case strings.HasPrefix(trimmed, "Running ") && line != trimmed:
			cutShort()
			label = strings.TrimPrefix(trimmed, "Running ")
			if i := strings.LastIndex(label, " ("); i > 0 && strings.HasSuffix(label, ")") {
				label = label[:i] // the binary's path, whose hash changes
			}
		case strings.HasPrefix(trimmed, "Doc-tests ") && line != trimmed:
			cutShort()
			label = trimmed
		case strings.HasPrefix(line, "running "):
			if n, _, _ := strings.Cut(line[len("running "):], " "); n != "" && strings.Trim(n, "0123456789") == "" {
				cutShort()
				running = true
			}
		}
	}
	cutShort()
	return t.census()
}

// cargoResult reads what follows "test " on a line of libtest's: the
// test's name and outcome, and false when the line is not a test's
// result (a benchmark's, or another line that starts so).
func cargoResult(s string) (string, outcome, bool) {
	i := strings.LastIndex(s, " ... ")
	if i < 0 {
		return "", 0, false
	}
	name, result := strings.TrimRight(s[:i], " "), s[i+len(" ... "):]
	for _, mode := range []string{" - should panic", " - compile fail", " - compile"} {
		if n, ok := strings.CutSuffix(name, mode); ok {
			name = n
			break
		}
	}
	word, _, _ := strings.Cut(result, " ") // "ok <0.001s>" with --report-time
	word, _, _ = strings.Cut(word, ",")    // "ignored, reason"
	switch word {
	case "ok":
		return name, passed, true
	case "FAILED":
		return name, failed, true
	case "ignored":
		return name, skipped, true
	}
	return "", 0, false
}

// termLine is a line of a runner's output as a terminal shows it, without
// its line end.
func termLine(line string) string {
	line = strings.TrimRight(line, "\r\n")
	if strings.ContainsAny(line, "\x1b\r") {
		line = goals.CleanText(line)
	}
	return line
}

// maxTAPDepth is the deepest nesting of subtests ParseTAP reads.
const maxTAPDepth = 64

// tapResult is a test point read, waiting for its parent's name.
type tapResult struct {
	name string
	o    outcome
}

// ParseTAP reads TAP (versions 13 and 14) as node --test-reporter=tap
// writes it: test points "ok 1 - name" and "not ok 2 - name", with
// subtests indented four spaces a level before their parent's test
// point. A subtest is named with its parents, outermost first, joined by
// " > " ("math > division > divides"); a parent (a suite, or a test with
// subtests) is a test too. A name is the description up to its directive
// (an unescaped "#" after a space), with TAP's escapes "\#" and "\\"
// undone. A test point whose directive is SKIP, or TODO on "not ok", is
// skipped; else "ok" passed and "not ok" failed. YAML diagnostic blocks,
// comments, plans and other lines are passed over, and so are subtests
// nested deeper than 64 levels. Subtests whose parent never reported
// (its process exited first) are named under the parent's "# Subtest:"
// line where there was one. A name reported twice has the strongest of
// its outcomes: failed, then passed, then skipped. A test point at the top
// named by an absolute path to a JavaScript or TypeScript file is how node
// reports a test file that failed (or exited) outside its tests: a group
// (Census.Groups).
func ParseTAP(out string) *Census {
	p := &tapParser{tally: newTally("tap")}
	var (
		yamlEnd    string // the line that ends the YAML block being passed over
		lastIndent = -1   // the indentation of the line before, if it was a test point
	)
	for line := range strings.Lines(out) {
		line = termLine(line)
		body := strings.TrimLeft(line, " ")
		indent := len(line) - len(body)
		testIndent := lastIndent
		lastIndent = -1
		if yamlEnd != "" {
			if line == yamlEnd {
				yamlEnd = ""
				continue
			}
			if body == "" || indent >= len(yamlEnd)-len("...") {
				continue
			}
			yamlEnd = "" // a line less indented than the block ends it unclosed
		}
		depth := indent / 4
		if depth > maxTAPDepth {
			continue
		}
		if body == "---" && indent > testIndent && testIndent >= 0 {
			yamlEnd = line[:indent] + "..."
			continue
		}
		if name, ok := strings.CutPrefix(body, "# Subtest:"); ok {
			// Subtests still held belong to the subtest before, which
			// never reported.
			p.report(depth, p.children(depth, p.subtest[depth])...)
			p.subtest[depth] = tapUnescape(strings.TrimSpace(name))
			continue
		}
		if name, o, ok := tapPoint(body); ok {
			lastIndent = indent
			p.report(depth, append([]tapResult{{name, o}}, p.children(depth, name)...)...)
			p.subtest[depth] = "" // it reported; the subtests after it are another's
		}
	}
	for depth := maxTAPDepth - 1; depth >= 0; depth-- {
		p.report(depth, p.children(depth, p.subtest[depth])...)
	}
	return p.census()
}

type tapParser struct {
	*tally
	held    [maxTAPDepth + 1][]tapResult // results by depth, until their parent reports
	subtest [maxTAPDepth + 1]string      // the latest "# Subtest:" name by depth
	n       int                          // results held
}

// report records results at depth: in the tally at the top, else held for
// their parent.
func (p *tapParser) report(depth int, results ...tapResult) {
	if depth == 0 {
		for _, r := range results {
			p.merge(r.name, r.o)
			if tapFile(r.name) {
				p.group(r.name)
			}
		}
		return
	}
	if p.n+len(results) > 3*MaxNames {
		p.truncated = true
		return
	}
	p.held[depth] = append(p.held[depth], results...)
	p.n += len(results)
}

// children takes the results held below depth, named under parent (kept
// as they are when parent is "").
func (p *tapParser) children(depth int, parent string) []tapResult {
	if depth+1 > maxTAPDepth || len(p.held[depth+1]) == 0 {
		return nil
	}
	out := p.held[depth+1]
	p.held[depth+1], p.n = nil, p.n-len(out)
	if parent != "" {
		for i := range out {
			out[i].name = boundName(parent + " > " + out[i].name)
		}
	}
	return out
}

// tapFile says whether a test point's name is an absolute path to a
// JavaScript or TypeScript file, as node names a test file.
func tapFile(name string) bool {
	abs := strings.HasPrefix(name, "/") || strings.HasPrefix(name, "file://") ||
		len(name) > 3 && name[1] == ':' && (name[2] == '\\' || name[2] == '/')
	if !abs {
		return false
	}
	for _, ext := range []string{".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx"} {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// tapPoint reads a test point, without its indentation: its name and
// outcome, and false when the line is not a test point or has no name.
func tapPoint(s string) (string, outcome, bool) {
	o := passed
	switch {
	case s == "ok" || strings.HasPrefix(s, "ok "):
		s = s[len("ok"):]
	case s == "not ok" || strings.HasPrefix(s, "not ok "):
		s, o = s[len("not ok"):], failed
	default:
		return "", 0, false
	}
	s = strings.TrimLeft(strings.TrimLeft(s, " "), "0123456789")
	s = strings.TrimLeft(s, " ")
	if rest, ok := strings.CutPrefix(s, "-"); ok {
		s = strings.TrimLeft(rest, " ")
	}
	desc, directive := tapDirective(s)
	switch {
	case hasWordPrefix(directive, "skip"):
		o = skipped
	case hasWordPrefix(directive, "todo") && o == failed:
		o = skipped
	}
	name := tapUnescape(strings.TrimRight(desc, " "))
	return name, o, name != ""
}

// tapDirective splits a test point's description from its directive: the
// text after the first "#" that is not escaped and follows a space, or
// starts the description.
func tapDirective(s string) (desc, directive string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++ // the escaped character is the description's
		case '#':
			if i == 0 || s[i-1] == ' ' {
				return s[:i], strings.TrimLeft(s[i+1:], " ")
			}
		}
	}
	return s, ""
}

// hasWordPrefix reports whether s starts with the letters of word, in any
// case (TAP's "# SKIP", "# skipped", "# Todo").
func hasWordPrefix(s, word string) bool {
	return len(s) >= len(word) && strings.EqualFold(s[:len(word)], word)
}

// tapUnescape undoes TAP's escapes of a description: "\#" and "\\".
func tapUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '\\' || s[i+1] == '#') {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
