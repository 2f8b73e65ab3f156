package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/goals"
)

// maxCensusText bounds what a census keeps of a command's output to read
// cargo's or TAP's lines from, and the size of a JUnit report it reads.
const maxCensusText = 32 << 20

// censusTap takes a census of the tests the gate's commands run, where the
// runner can tell:
//   - a command that is go test alone (no pipe, no second command) runs as
//     go test -json, whose events give each test's outcome; what plain go
//     test would have printed is kept as the command's output;
//   - pytest, wherever a command runs it, writes a JUnit report
//     (--junitxml, through PYTEST_ADDOPTS) that is read after the command;
//   - a command that runs jest or vitest, or npm running a package script
//     that does, writes jest's JSON report (see jsCountArgs), read after
//     the command;
//   - the lines of cargo test and of TAP (node --test) are read from what
//     the command printed.
//
// What it finds of all the commands is one census (Census). A fresh tap
// counts the tests as they run now: go test replays the results it cached
// for a package whose files did not change, a flaky skip with them, so it
// runs with -count=1 (in GOFLAGS, which go applies where it knows the
// flag).
type censusTap struct {
	fresh   bool
	dir     string // where the reports are written
	workdir string // where the commands run
	n       int
	goJSON  bool
	report  string
	jest    string       // the jest report of the current command, "" if none
	text    bytes.Buffer // what the current command printed, to maxCensusText
	cut     bool
	found   []*Census
}

// goTestCmd finds go test at the start of a command, after assignments.
var goTestCmd = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*)go\s+test\b`)
})

func (t *censusTap) Prepare(command string) (string, []string) {
	t.n++
	t.goJSON, t.cut = false, false
	t.text.Reset()
	t.report = filepath.Join(t.dir, fmt.Sprintf("pytest-%d.xml", t.n))
	if cmds := simpleCommands(command); len(cmds) == 1 && !strings.ContainsAny(command, "|;&\n") && goTestCmd().MatchString(command) {
		json := false
		for _, w := range cmds[0] {
			json = json || w == "-json" || strings.HasPrefix(w, "-json=")
		}
		if !json {
			command = goTestCmd().ReplaceAllString(command, "${1}go test -json")
		}
		t.goJSON = true
	}
	t.jest = ""
	if report := filepath.Join(t.dir, fmt.Sprintf("jest-%d.json", t.n)); !t.goJSON {
		if more, ok := jsCountArgs(command, t.workdir, report); ok {
			command += more
			t.jest = report
		}
	}
	opts := strings.TrimSpace(os.Getenv("PYTEST_ADDOPTS") + " " + shellQuote("--junitxml="+t.report))
	env := []string{"PYTEST_ADDOPTS=" + opts}
	if t.fresh {
		env = append(env, "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -count=1"))
	}
	return command, env
}

func (t *censusTap) Filter(all io.Reader, kept io.Writer) {
	if t.goJSON {
		c, _ := ParseGoTestJSON(all, kept)
		t.found = append(t.found, c)
		return
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := all.Read(buf)
		if n > 0 {
			_, _ = kept.Write(buf[:n])
			if room := maxCensusText - t.text.Len(); room > 0 {
				t.text.Write(buf[:min(n, room)])
			}
			t.cut = t.cut || t.text.Len() >= maxCensusText
		}
		if err != nil {
			return
		}
	}
}

func (t *censusTap) Done() {
	if !t.goJSON && !t.cut {
		out := t.text.String()
		for _, c := range []*Census{ParseCargoTest(out), ParseTAP(out)} {
			if c.told() {
				t.found = append(t.found, c)
			}
		}
	}
	t.text.Reset()
	if data, err := readBounded(t.report); err == nil {
		if c, err := ParseJUnitXML(data); err == nil {
			t.found = append(t.found, c)
		}
		_ = os.Remove(t.report)
	}
	if t.jest != "" {
		if data, err := readBounded(t.jest); err == nil {
			if c, err := ParseJestJSON(data, t.workdir); err == nil {
				t.found = append(t.found, c)
			}
			_ = os.Remove(t.jest)
		}
	}
}

// Census is what the runners told of the commands run so far, nil when
// none could tell.
func (t *censusTap) Census() *Census {
	if len(t.found) == 0 {
		return nil
	}
	return Merge(t.found...)
}

// told says whether a census names any test.
func (c *Census) told() bool {
	return c != nil && len(c.Passed)+len(c.Failed)+len(c.Skipped) > 0
}

func readBounded(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxCensusText {
		return nil, errors.New("not a report to read")
	}
	return io.ReadAll(io.LimitReader(f, maxCensusText))
}

// shellQuote quotes s for a shell's (and Python's shlex's) reading.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Merge is one census of several (each runner's, each command's): a name
// two of them give keeps its strongest outcome (failed, then passed, then
// skipped), and is a group when one of them says so; the runner is
// theirs, joined by "+".
func Merge(cs ...*Census) *Census {
	var runners []string
	t := newTally("")
	for _, c := range cs {
		if c == nil {
			continue
		}
		if !contains(runners, c.Runner) {
			runners = append(runners, c.Runner)
		}
		for _, n := range c.Skipped {
			t.merge(n, skipped)
		}
		for _, n := range c.Passed {
			t.merge(n, passed)
		}
		for _, n := range c.Failed {
			t.merge(n, failed)
		}
		for _, n := range c.Groups {
			t.group(n)
		}
		t.truncated = t.truncated || c.Truncated
	}
	t.runner = strings.Join(runners, "+")
	return t.census()
}

// Count runs the gate's commands g in dir with env, as the judge does, for
// the census of the tests they run (nil when no runner could tell): the
// count a cycle's finish is compared with.
func Count(ctx context.Context, g goals.Gate, dir string, env []string) (*Census, []goals.CommandResult, error) {
	tap, done, err := newCensusTap(dir)
	if err != nil {
		return nil, nil, err
	}
	defer done()
	res := goals.RunGate(ctx, g, dir, env, tap)
	return tap.Census(), res, nil
}

// newCensusTap is a census tap for commands run in workdir, with a
// directory of its own for the reports, removed by done.
func newCensusTap(workdir string) (*censusTap, func(), error) {
	dir, err := os.MkdirTemp("", "git-evolve-census-")
	if err != nil {
		return nil, nil, err
	}
	if workdir == "" {
		workdir, _ = os.Getwd()
	}
	return &censusTap{dir: dir, workdir: workdir}, func() { _ = os.RemoveAll(dir) }, nil
}
