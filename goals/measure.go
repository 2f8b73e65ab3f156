package goals

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/git-evolve/git-evolve/redact"
)

// The results of a goal.
const (
	Pass = "pass"
	Fail = "fail"
	// Skip: the check exited 77, it cannot tell here (the autotools
	// convention).
	Skip = "skip"
	// Timeout: the check ran past its time limit and was stopped.
	Timeout = "timeout"
	// Error: the check could not run: exit 126 or 127 (a command or an
	// interpreter missing, a script not executable), or no shell to run it.
	Error = "error"
)

// Failing reports whether a result is one to work on: the check ran and
// said no (fail), or ran past its limit (timeout). A check that cannot
// run (error) or cannot tell (skip) is not.
func Failing(result string) bool { return result == Fail || result == Timeout }

// Result is one goal measured.
type Result struct {
	GoalID    string   `json:"goal_id"`
	Result    string   `json:"result"`
	Value     *float64 `json:"value,omitempty"`
	Threshold *float64 `json:"threshold,omitempty"`
	Weight    int      `json:"weight"`
	Duration  float64  `json:"duration_s"`
	ExitCode  int      `json:"exit_code"`
	// Limit is the time limit of a check that ran past it, in seconds.
	Limit float64 `json:"timeout_s,omitempty"`
	// Missing names the command or interpreter a check that could not run
	// lacks, when its output says which.
	Missing string `json:"missing,omitempty"`
	Reason  string `json:"reason,omitempty"` // why a pass became a fail, for example
	Output  string `json:"output,omitempty"` // combined stdout and stderr, shortened
	// Excerpt is the end of the output of a check that did not pass, as
	// Excerpt makes it.
	Excerpt string   `json:"excerpt,omitempty"`
	Tags    []string `json:"tags,omitempty"`
	// ID is GoalID again, under the name the seeds' scripts read
	// (jq '.goals[] | .id').
	ID string `json:"id"`
}

// Summary sums up a snapshot. Score is the passing weight over the weight
// of goals that passed, failed or timed out, times 100: a check that hangs
// counts against the score; skipped goals and checks that cannot run are
// unknown, not counted.
type Summary struct {
	Total    int     `json:"total"`
	Passing  int     `json:"passing"`
	Failing  int     `json:"failing"`
	Skipped  int     `json:"skipped"`
	TimedOut int     `json:"timed_out"`
	Errors   int     `json:"errors"`
	Score    float64 `json:"score"`
}

// Snapshot is every goal measured once.
type Snapshot struct {
	Timestamp string `json:"timestamp"`
	GitSHA    string `json:"git_sha,omitempty"`
	// Dirty says the working tree differed from GitSHA when it was measured
	// (uncommitted or untracked files): the figures are not those of the
	// commit alone.
	Dirty   bool     `json:"dirty,omitempty"`
	Era     string   `json:"era"`
	Goals   []Result `json:"goals"`
	Summary Summary  `json:"summary"`
}

// Options change how Measure runs checks.
type Options struct {
	// Dir is where checks run (the top of the working tree, or of the
	// checkout a cycle is judged in).
	Dir string
	// Env is the environment checks run with (nil: this process's).
	Env []string
	// Only measures these goal ids (all when empty).
	Only []string
	// Parallel is how many checks may run at once (default: the number of
	// CPUs).
	Parallel int
	// Now is the clock of the snapshot's timestamp.
	Now func() time.Time
	// OnCheck, when set, is told each goal's id as its check starts: from
	// the goroutines that run them, one call at a time.
	OnCheck func(id string)
	// OnDone, when set, is told each goal's id as its check ends, as
	// OnCheck is (the two share their one-at-a-time).
	OnDone func(id string)
}

// Measure runs the goals' checks and returns the snapshot. Meta goals run
// first, one at a time; goals whose check runs `go test` or that are tagged
// exclusive run alone; the others run in parallel.
func Measure(ctx context.Context, f *File, opts Options) *Snapshot {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	par := opts.Parallel
	if par <= 0 {
		par = runtime.NumCPU()
	}
	// Callers print from them, to writers that are not all safe for
	// concurrent use (a buffer, for git evolve mcp's commands).
	var mu sync.Mutex
	if onCheck := opts.OnCheck; onCheck != nil {
		opts.OnCheck = func(id string) {
			mu.Lock()
			defer mu.Unlock()
			onCheck(id)
		}
	}
	if onDone := opts.OnDone; onDone != nil {
		opts.OnDone = func(id string) {
			mu.Lock()
			defer mu.Unlock()
			onDone(id)
		}
	}
	var goals []Goal
	for _, g := range f.Goals {
		if len(opts.Only) == 0 || contains(opts.Only, g.ID) {
			goals = append(goals, g)
		}
	}
	results := make([]Result, len(goals))
	var shared []int
	for i, g := range goals {
		if g.Type == "meta" || exclusive(g) {
			opts.started(g.ID)
			results[i] = run(ctx, g, opts.Dir, opts.Env) // alone
			opts.ended(g.ID)
			continue
		}
		shared = append(shared, i)
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, par)
	for _, i := range shared {
		wg.Add(1)
		sem <- struct{}{}
		go func(i int) {
			defer wg.Done()
			defer func() { <-sem }()
			opts.started(goals[i].ID)
			results[i] = run(ctx, goals[i], opts.Dir, opts.Env)
			opts.ended(goals[i].ID)
		}(i)
	}
	wg.Wait()
	s := &Snapshot{Timestamp: now().UTC().Format(time.RFC3339), Era: f.Era, Goals: results}
	s.Summary = Summarize(results)
	return s
}

func (o *Options) started(id string) {
	if o.OnCheck != nil {
		o.OnCheck(id)
	}
}

func (o *Options) ended(id string) {
	if o.OnDone != nil {
		o.OnDone(id)
	}
}

// Summarize counts results and computes the weighted score.
func Summarize(results []Result) Summary {
	var sum Summary
	var passW, countedW int
	for _, r := range results {
		sum.Total++
		switch r.Result {
		case Pass:
			sum.Passing++
			passW += r.Weight
			countedW += r.Weight
		case Fail:
			sum.Failing++
			countedW += r.Weight
		case Timeout:
			sum.TimedOut++
			countedW += r.Weight
		case Error:
			sum.Errors++
		default:
			sum.Skipped++
		}
	}
	if countedW > 0 {
		sum.Score = math.Round(float64(passW)/float64(countedW)*1000) / 10
	}
	return sum
}

// Counts says the summary's counts in words: "3 passing, 1 failing, 1
// timed out, 2 cannot run, 1 skipped of 8", the last three only when there
// are any.
func (s Summary) Counts() string {
	out := fmt.Sprintf("%d passing, %d failing", s.Passing, s.Failing)
	if s.TimedOut > 0 {
		out += fmt.Sprintf(", %d timed out", s.TimedOut)
	}
	if s.Errors > 0 {
		out += fmt.Sprintf(", %d cannot run", s.Errors)
	}
	return out + fmt.Sprintf(", %d skipped of %d", s.Skipped, s.Total)
}

// MissingHint says, in one line, which checks could not run and what
// they lack ("" when every check ran): "cannot run here: lint
// (golangci-lint is missing), docs (exit 126); …".
func (s *Snapshot) MissingHint() string {
	var parts []string
	for _, r := range s.CannotRun() {
		parts = append(parts, r.GoalID+" ("+strings.TrimPrefix(r.Reason, "cannot run: ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return "cannot run here: " + strings.Join(parts, ", ") + "; install what they need, or give those goals checks that run here (they are no work for a cycle)"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func exclusive(g Goal) bool {
	return strings.Contains(g.Check, "go test") || contains(g.Tags, "exclusive")
}

// shell is how checks run: bash without profile or rc files when there is
// one, sh otherwise.
func shell() []string {
	if p, err := exec.LookPath("bash"); err == nil {
		return []string{p, "--noprofile", "--norc", "-c"}
	}
	return []string{"sh", "-c"}
}

// SkipCode is the exit code by which a check says it cannot tell
// (the autotools convention).
const SkipCode = 77

// shellRun is one shell command run to its end or its time limit.
type shellRun struct {
	exitCode int // -1 when killed or not started
	timedOut bool
	signaled bool
	err      error // the command could not run
	duration float64
	output   string // combined stdout and stderr, as captured (bounded)
	dir      string // where it ran
	path     string // the PATH it ran with
	home     string // the HOME it ran with
}

// missing names what the command lacked when it could not run
// (missingCommand); "" when its output does not say.
func (sr shellRun) missing() string { return missingCommand(sr.output, sr.dir, sr.path, sr.home) }

// runShell runs command with the shell in dir, within timeout, with the
// environment base (nil: this process's) and extra variables. A timeout (or
// an interrupt through ctx) ends the command and everything it started.
func runShell(ctx context.Context, command, dir string, timeout time.Duration, base []string, env ...string) shellRun {
	return runTapped(ctx, command, dir, timeout, base, nil, env...)
}

// runTapped is runShell with what the command prints going through filter
// (nil: none): filter reads all of it, from its own goroutine, and writes
// what is kept as the command's output; it returns once it has read all.
func runTapped(ctx context.Context, command, dir string, timeout time.Duration, base []string, filter func(io.Reader, io.Writer), env ...string) shellRun {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	sh := shell()
	cmd := exec.CommandContext(ctx, sh[0], append(sh[1:], command)...)
	cmd.Dir = dir
	if base == nil {
		base = os.Environ()
	}
	cmd.Env = append(base[:len(base):len(base)], env...)
	out := &capture{limit: captureLimit}
	cmd.Stdout = out
	cmd.Stderr = out
	var pw *io.PipeWriter
	filtered := make(chan struct{})
	if filter != nil {
		var pr *io.PipeReader
		pr, pw = io.Pipe()
		cmd.Stdout, cmd.Stderr = pw, pw
		go func() {
			defer close(filtered)
			filter(pr, out)
			_, _ = io.Copy(io.Discard, pr) // what the filter left unread
		}()
		defer pw.Close() // on every way out, so that the filter ends
	}
	ownGroup(cmd)
	// A timeout (or an interrupt) ends the command and everything it
	// started; once the shell has exited, output held open by a child it
	// left running is not waited for.
	cmd.Cancel = func() error { killGroup(cmd); return nil }
	cmd.WaitDelay = time.Second
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		killGroup(cmd) // children the command left behind
	}
	if filter != nil {
		// The command's output is all written: the filter is told so, and
		// what it keeps is waited for.
		pw.Close()
		<-filtered
	}
	r := shellRun{output: out.String(), dir: dir, path: envOf(cmd.Env, "PATH"), home: envOf(cmd.Env, "HOME")}
	if cmd.ProcessState != nil && cmd.ProcessState.ExitCode() == -1 && ctx.Err() != nil {
		r.timedOut = true // killed by us, not exited
	} else if errors.Is(err, exec.ErrWaitDelay) {
		err = nil // the shell exited 0; a child held its output
	}
	r.duration = math.Round(time.Since(start).Seconds()*1000) / 1000
	var ee *exec.ExitError
	switch {
	case r.timedOut:
		r.exitCode = -1
	case err == nil:
	case errors.As(err, &ee) && ee.ExitCode() == -1:
		r.exitCode, r.signaled = -1, true
	case errors.As(err, &ee):
		r.exitCode = ee.ExitCode()
	default:
		r.exitCode, r.err = -1, err
	}
	return r
}

func run(ctx context.Context, g Goal, dir string, env []string) (r Result) {
	r = Result{GoalID: g.ID, ID: g.ID, Weight: g.Weight, Tags: g.Tags}
	if g.Continuous != nil {
		t := g.Continuous.Threshold
		r.Threshold = &t
	}
	// A value file is read only if this run of the check wrote it: the file
	// as it was before the check ran, and when the check started, tell it
	// from one an earlier run left.
	var before fs.FileInfo
	if c := g.Continuous; c != nil && c.ValueFile != "" {
		before = statValueFile(dir, c.ValueFile)
	}
	start := time.Now()
	sr := runShell(ctx, g.Check, dir, g.Timeout, env, "EVOLVE_GOAL_ID="+g.ID)
	r.Duration, r.Output, r.ExitCode = sr.duration, shorten(sr.output), sr.exitCode
	defer func() {
		if r.Result != Pass {
			r.Excerpt = Excerpt(sr.output)
		}
	}()
	if status, reason, missing := sr.status(g.Timeout); status != "" {
		r.Result, r.Reason, r.Missing = status, reason, missing
		if status == Timeout {
			r.Limit = g.Timeout.Seconds()
		}
		return r
	}
	switch {
	case g.PassWhen != nil:
		// pass_when decides, whatever the exit code says.
		r.Result = Pass
		if !g.PassWhen.Holds(sr.exitCode, sr.output) {
			r.Result, r.Reason = Fail, "pass_when does not hold: "+g.PassWhen.Source
		}
	case sr.exitCode == 0:
		r.Result = Pass
	case sr.exitCode == SkipCode:
		r.Result, r.Reason = Skip, "exit 77: the check cannot tell here"
	default:
		r.Result = Fail
	}
	if c := g.Continuous; c != nil && r.Result != Skip {
		var v float64
		ok, none := false, "no value in the check's output"
		if c.ValueFile != "" {
			v, none = readValueFile(dir, c, before, start)
			ok = none == ""
		} else {
			v, ok = ExtractValue(sr.output, c.Value)
		}
		if !ok {
			if r.Result == Pass {
				r.Result, r.Reason = Fail, none
			}
			return r
		}
		r.Value = &v
		if r.Result == Pass && !Meets(v, c) {
			r.Result = Fail
			r.Reason = "value " + strconv.FormatFloat(v, 'g', -1, 64) + " is on the wrong side of the threshold " +
				strconv.FormatFloat(c.Threshold, 'g', -1, 64) + " (" + c.Direction + " is better)"
		}
	}
	return r
}

// envOf is the value env gives name (its last), as the shell reads it.
func envOf(env []string, name string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], name+"="); ok {
			return v
		}
	}
	return ""
}

// status is how a command that did not simply exit ended: timeout (past
// limit), error (it could not run: exit 126 or 127, or the shell did not
// start) or fail (killed by a signal), with the reason in words and, for
// an error, what is missing (missingCommand, read once); "" when it exited
// with a code of its own.
func (sr shellRun) status(limit time.Duration) (status, reason, missing string) {
	switch {
	case sr.timedOut:
		return Timeout, "timed out after " + limit.String(), ""
	case sr.signaled:
		return Fail, "killed by a signal", ""
	case sr.err != nil:
		return Error, "cannot run: " + sr.err.Error(), sr.missing()
	case sr.exitCode == 126 || sr.exitCode == 127:
		what, m := "cannot run: exit status "+strconv.Itoa(sr.exitCode), sr.missing()
		switch {
		case m == "":
		case sr.exitCode == 127:
			what = "cannot run: " + m + " is missing"
		default:
			what = "cannot run: " + m + " cannot be executed"
		}
		return Error, what, m
	}
	return "", "", ""
}

// CommandResult is one of the gate's test commands, run.
type CommandResult struct {
	Command string `json:"command"`
	Passed  bool   `json:"passed"`
	// Status is pass, fail, timeout or error (the command could not run),
	// as for a goal.
	Status   string  `json:"status"`
	ExitCode int     `json:"exit_code"`
	TimedOut bool    `json:"timed_out,omitempty"`
	Limit    float64 `json:"timeout_s,omitempty"`
	Missing  string  `json:"missing,omitempty"`
	Duration float64 `json:"duration_s"`
	Reason   string  `json:"reason,omitempty"`
	Output   string  `json:"output,omitempty"` // shortened
	// Excerpt is the end of a failed command's output (see Excerpt).
	Excerpt string `json:"excerpt,omitempty"`
}

// A Tap watches the gate's test commands run, for what their runners say
// of each test (see the gate package's census): it may rewrite a command
// and add to its environment before it runs, and it reads all the command
// prints, writing what is kept as the command's output.
type Tap interface {
	// Prepare is the command to run for command, and more environment.
	Prepare(command string) (string, []string)
	// Filter reads all the command prints and writes what is kept; it
	// runs in a goroutine of its own while the command runs.
	Filter(all io.Reader, kept io.Writer)
	// Done is told the command ended.
	Done()
}

// RunGate runs the gate's test commands in dir with the environment env
// (nil: this process's), in order, each within the gate's timeout, and
// stops at the first that does not pass (exit 0). A command that times out
// does not pass: a gate is a verdict, not a goal that may be unknown. tap,
// when not nil, watches each command (the command recorded is the one
// given, whatever Prepare made of it).
func RunGate(ctx context.Context, g Gate, dir string, env []string, tap Tap) []CommandResult {
	out := []CommandResult{}
	for _, c := range g.Commands {
		var sr shellRun
		if tap != nil {
			run, more := tap.Prepare(c)
			sr = runTapped(ctx, run, dir, g.Timeout, env, tap.Filter, more...)
			tap.Done()
		} else {
			sr = runShell(ctx, c, dir, g.Timeout, env)
		}
		cr := CommandResult{Command: c, Status: Pass, ExitCode: sr.exitCode, TimedOut: sr.timedOut, Duration: sr.duration, Output: shorten(sr.output)}
		if status, reason, missing := sr.status(g.Timeout); status != "" {
			cr.Status, cr.Reason, cr.Missing = status, reason, missing
		} else if sr.exitCode != 0 {
			cr.Status, cr.Reason = Fail, "exit status "+strconv.Itoa(sr.exitCode)
		}
		cr.Passed = cr.Status == Pass
		switch cr.Status {
		case Pass:
		case Timeout:
			cr.Limit = g.Timeout.Seconds()
			fallthrough
		default:
			cr.Excerpt = Excerpt(sr.output)
		}
		out = append(out, cr)
		if !cr.Passed || ctx.Err() != nil {
			break
		}
	}
	return out
}

// Meets reports whether v is on the good side of the goal's threshold.
func Meets(v float64, c *Continuous) bool {
	if c.Direction == "lower" {
		return v <= c.Threshold
	}
	return v >= c.Threshold
}

var number = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?`) })

// ExtractValue finds a goal's number in a check's output: the first group
// (or the whole match) of re, or, without re, the last number in the output.
func ExtractValue(out string, re *regexp.Regexp) (float64, bool) {
	var s string
	if re != nil {
		m := re.FindStringSubmatch(out)
		if m == nil {
			return 0, false
		}
		s = m[0]
		if len(m) > 1 {
			s = m[1]
		}
	} else {
		all := number().FindAllString(out, -1)
		if len(all) == 0 {
			return 0, false
		}
		s = all[len(all)-1]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v, true
}

// captureLimit bounds how much of a check's output is kept in memory: the
// first and the last captureLimit bytes.
const captureLimit = 64 << 10

// capture keeps the start and the end of what is written to it.
type capture struct {
	limit int
	head  []byte
	tail  []byte // a window over the most recent bytes
	cut   bool   // bytes between head and tail were dropped
	mu    sync.Mutex
}

func (c *capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if room := c.limit - len(c.head); room > 0 {
		k := min(room, len(p))
		c.head = append(c.head, p[:k]...)
		p = p[k:]
	}
	if len(p) == 0 {
		return n, nil
	}
	c.tail = append(c.tail, p...)
	if len(c.tail) > c.limit {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-c.limit:]...)
		c.cut = true
	}
	return n, nil
}

func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		return string(c.head) + "\n…\n" + string(c.tail)
	}
	return string(c.head) + string(c.tail)
}

// maxOutput is how much of a check's output a snapshot keeps: the first and
// last halves, in runes.
const maxOutput = 500

// shorten is what a result keeps of a command's output: the first and the
// last maxOutput/2 runes of it, secrets redacted. Each half is redacted
// with the next redactMargin runes beyond its cut, so that a secret the
// cut goes through is found whole.
func shorten(s string) string {
	if utf8.RuneCountInString(s) <= maxOutput {
		return redact.String(s)
	}
	r := []rune(s)
	head := []rune(redact.String(string(r[:min(len(r), maxOutput/2+redactMargin)])))
	tail := []rune(redact.String(string(r[max(0, len(r)-maxOutput/2-redactMargin):])))
	return string(head[:min(len(head), maxOutput/2)]) + "\n…\n" + string(tail[max(0, len(tail)-maxOutput/2):])
}

// redactMargin is how far past the cut of a kept part of an output its
// secrets are looked for: longer than any secret but a private key, whose
// rules find a block cut at either end.
const redactMargin = 4 << 10

// FailingByWeight lists the snapshot's goals to work on (failing or timed
// out; not those that cannot run or skip), highest weight first (in the
// snapshot's order among equals).
func (s *Snapshot) FailingByWeight() []Result {
	var out []Result
	for _, r := range s.Goals {
		if Failing(r.Result) {
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Weight > out[j].Weight })
	return out
}

// CannotRun lists the snapshot's goals whose checks could not run.
func (s *Snapshot) CannotRun() []Result {
	var out []Result
	for _, r := range s.Goals {
		if r.Result == Error {
			out = append(out, r)
		}
	}
	return out
}
