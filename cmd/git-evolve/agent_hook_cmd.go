package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/agents"
	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/escape"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/loop"
)

// hookAgentCmd is what the hooks git evolve init --agent installs run: the
// loop inside an agent's own interactive session.
type hookAgentCmd struct {
	Agent string `arg:"" enum:"claude,codex,cursor,gemini" help:"The agent whose hook this is: claude, codex, cursor or gemini." placeholder:"AGENT"`
	Event string `arg:"" enum:"session-start,stop,pre-tool" help:"The event: session-start, stop or pre-tool." placeholder:"EVENT"`
}

func (hookAgentCmd) Help() string {
	return `Reads the agent's hook payload on standard input (at most 1 MiB of JSON) and
answers on standard output in that agent's format (docs/agents.md):

  session-start  tells the agent where the loop stands (git evolve status)
                 and, while a cycle is open, the cycle's brief
  stop           while a cycle is open in this worktree, finishes it
                 through the judge (git evolve cycle finish), asks
                 git evolve halt-check, and when the loop goes on, opens the
                 next cycle (git evolve next, git evolve cycle start) and
                 tells the agent to continue with its brief; when the loop
                 halts, or no cycle is open, the agent stops
  pre-tool       while a cycle is open, denies an edit of the goals file or
                 of anything under the git directory, and a shell command
                 that writes there or runs what only the operator runs
                 (cycle finish and abort, stop, kill, resume, trust, record)

Inside a git evolve run, whose driver runs the cycles, it answers nothing.
A problem is said on standard error with exit 1 (the agent shows it and
goes on; an integrity breach too, since agents read exit 2 as "block").`
}

func (c *hookAgentCmd) Run(e *env) error {
	a, err := agents.Lookup(c.Agent)
	if err != nil {
		return usagef("%v", err)
	}
	ev := agents.Event(c.Event)
	data, err := io.ReadAll(io.LimitReader(e.stdin, agents.MaxPayload+1))
	if err != nil {
		return err
	}
	p, err := agents.ParsePayload(data)
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %s hook: %v (answered nothing)\n", a.HookEvent(ev), err)
		_, werr := e.stdout.Write(a.Encode(ev, agents.Answer{}))
		return werr
	}
	var ans agents.Answer
	if !inAgentOfRun(e) {
		switch ev {
		case agents.SessionStart:
			ans, err = sessionStartAnswer(e)
		case agents.Stop:
			ans, err = stopAnswer(e)
		case agents.PreTool:
			ans, err = preToolAnswer(e, p)
		}
	}
	if err != nil {
		var ge *integrityError
		if errors.As(err, &ge) {
			// Agents take exit 2 as "block": a breach is said, with exit 1.
			err = fmt.Errorf("integrity breach: %s (git evolve verify says more)", ge.msg)
		}
		return err
	}
	_, err = e.stdout.Write(a.Encode(ev, ans))
	return err
}

// inAgentOfRun reports whether the hook runs inside the agent of a git
// evolve run: the driver runs that loop, not the agent's hooks.
func inAgentOfRun(e *env) bool {
	if e.getenv("EVOLVE_RUN_ID") != "" {
		return true
	}
	repo, err := e.Repo()
	if err != nil {
		return false
	}
	_, _, _, ok := loop.AgentInside(repo.CommonDir())
	return ok
}

// inner runs a git evolve command in this process, as the MCP server's
// tools do, and returns its output and exit code.
func inner(e *env, args ...string) (stdout, stderr []byte, code int) {
	var out, errb bytes.Buffer
	code = runContext(e.ctx, append([]string{"-C", e.dir, "--color", "never"}, args...), strings.NewReader(""), &out, &errb, e.getenv)
	return out.Bytes(), errb.Bytes(), code
}

// innerError is a command run by a hook that failed: its own words.
func innerError(what string, stderr []byte, code int) error {
	msg := strings.TrimSpace(string(stderr))
	msg = strings.ReplaceAll(msg, "git-evolve: error: ", "")
	msg = strings.ReplaceAll(msg, "git-evolve: ", "")
	msg = escape.Terminal(msg)
	switch code {
	case exitUsage:
		return &usageError{msg: what + ": " + msg}
	case exitIntegrity:
		return &integrityError{msg: what + ": " + msg}
	}
	return fmt.Errorf("%s: %s", what, msg)
}

// openCycle is the cycle open in this worktree, nil when none is.
func openCycle(e *env) (*cycle.Ledger, *cycle.OpenCycle, error) {
	l, err := e.Cycles()
	if err != nil {
		return nil, nil, err
	}
	c, err := l.Current()
	if errors.Is(err, cycle.ErrNoOpenCycle) {
		return l, nil, nil
	}
	return l, c, err
}

// sessionCycle reports whether the agent's session runs cycle c: one
// opened by hand or by its hooks, not by a git evolve run.
func sessionCycle(c *cycle.OpenCycle) bool {
	return c != nil && (c.Run == "" || c.Run == loop.SessionRun)
}

const maxStatus = 4 << 10

func sessionStartAnswer(e *env) (agents.Answer, error) {
	_, c, err := openCycle(e)
	if err != nil {
		return agents.Answer{}, err
	}
	var b strings.Builder
	b.WriteString("This repository runs an evolve loop with git-evolve (the git-evolve skill says how).\n\n")
	out, _, code := inner(e, "status")
	if code == 0 {
		st := strings.TrimSpace(escape.Terminal(string(out)))
		if len(st) > maxStatus {
			st = "…" + st[len(st)-maxStatus:]
		}
		fmt.Fprintf(&b, "git evolve status:\n\n%s\n\n", st)
	}
	if !sessionCycle(c) {
		if c != nil {
			b.WriteString("A git evolve run drives this worktree's cycle: leave the loop to it.\n")
		} else {
			b.WriteString("No cycle is open. To run the loop: when git evolve halt-check says it may go on, git evolve cycle start opens a cycle (the git-evolve skill says how); do its work and end your turn: the Stop hook finishes the cycle through the judge and gives you the next brief.\n")
		}
		return agents.Answer{Context: b.String()}, nil
	}
	brief, err := cycleBrief(e, c, nil)
	if err != nil {
		return agents.Answer{}, err
	}
	fmt.Fprintf(&b, "Cycle %d is open. Its brief:\n\n%s", c.Cycle, brief)
	return agents.Answer{Context: b.String()}, nil
}

// cycleBrief is the Markdown brief of open cycle c, on work w (nil: the
// cycle's own target).
func cycleBrief(e *env, c *cycle.OpenCycle, w *loop.Work) (string, error) {
	s, err := loadState(e, "")
	if err != nil {
		return "", err
	}
	if w == nil {
		rung := c.Rung
		if rung == "" {
			rung = loop.RungGoal
		}
		w = &loop.Work{Rung: rung, Target: c.Target, Title: c.Target, Why: "the target the cycle was opened with", Skipped: []string{}}
	}
	var measured *goals.Snapshot
	if len(c.Before) > 0 {
		var snap goals.Snapshot
		if json.Unmarshal(c.Before, &snap) == nil {
			measured = &snap
		}
	}
	b, err := loop.SessionBrief(s, c, w, measured)
	if err != nil {
		return "", err
	}
	return string(b.Markdown()), nil
}

func stopAnswer(e *env) (agents.Answer, error) {
	l, c, err := openCycle(e)
	if err != nil || !sessionCycle(c) {
		return agents.Answer{}, err
	}
	// The finish: the agent's message, if it left one, for the commit.
	top, err := l.Repo().WorkTree()
	if err != nil {
		return agents.Answer{}, err
	}
	args := []string{"cycle", "finish", "--json", "--no-progress"}
	msg, err := loop.AgentMessage(top)
	if err != nil {
		fmt.Fprintf(e.stderr, "git-evolve: warning: %v\n", err)
	}
	if msg != "" {
		args = append(args, "--message="+msg) // one word: a message may start with a dash
	}
	out, errOut, code := inner(e, args...)
	if code != exitOK && code != exitRecoverable {
		return agents.Answer{}, withHint(innerError(fmt.Sprintf("cycle %d was not finished", c.Cycle), errOut, code),
			"git evolve cycle status shows the cycle; fix what is said and end the turn again, or run git evolve cycle finish")
	}
	if msg != "" {
		_ = os.Remove(filepath.Join(top, filepath.FromSlash(loop.CommitMsgFile)))
	}
	var fin struct {
		Cycle  int    `json:"cycle"`
		Target string `json:"target"`
		Result string `json:"result"`
		Commit string `json:"commit"`
	}
	_ = json.Unmarshal(out, &fin)
	done := fmt.Sprintf("Cycle %d (%s) finished: %s", fin.Cycle, fin.Target, fin.Result)
	if fin.Result == "regressed" {
		done += ", its work reverted (saved under refs/evolve/cycles/)"
	}
	said := failureLines(errOut)
	// Does the loop go on?
	hout, herr, hcode := inner(e, "halt-check", "--json")
	switch hcode {
	case exitOK, exitRecoverable:
	case exitHalted, exitPaused:
		var h struct {
			Reason string `json:"halt_reason"`
			Detail string `json:"detail"`
		}
		_ = json.Unmarshal(hout, &h)
		return agents.Answer{Message: termLine(fmt.Sprintf("git-evolve: %s; the loop halts: %s (%s)", done, h.Reason, h.Detail))}, nil
	default:
		return agents.Answer{}, innerError(done+"; halt-check failed", herr, hcode)
	}
	// The next cycle: the work the ladder picks, and its cycle opened.
	nout, nerr, ncode := inner(e, "next", "--json", "--no-progress")
	if ncode != exitOK {
		return agents.Answer{}, innerError(done+"; git evolve next failed", nerr, ncode)
	}
	var w loop.Work
	if err := json.Unmarshal(nout, &w); err != nil {
		return agents.Answer{}, fmt.Errorf("%s; git evolve next said no work: %v", done, err)
	}
	// cycle start takes a goal, a directive or a queue item; for other
	// work (a generator's, a bead) it takes the failing goal of the
	// highest weight, and the brief says the cycle's own target.
	start := []string{"cycle", "start", "--json", "--no-progress"}
	work := &w
	switch {
	case w.Rung == loop.RungGoal || w.Rung == loop.RungDirective:
		start = append(start, "--target", w.Target)
	case w.Rung == loop.RungHarvested && w.Item != nil:
		start = append(start, "--item", w.Item.ID)
	default:
		work = nil
	}
	_, serr, scode := inner(e, start...)
	if scode == exitUsage {
		// Nothing to work on (every goal passes): the loop stops here.
		return agents.Answer{Message: termLine(fmt.Sprintf("git-evolve: %s; no next cycle: %s", done, firstError(serr)))}, nil
	}
	if scode != exitOK {
		return agents.Answer{}, innerError(done+"; the next cycle did not start", serr, scode)
	}
	// A fresh view of the repository: the commands above changed it.
	e2 := &env{ctx: e.ctx, stdin: e.stdin, stdout: e.stdout, stderr: e.stderr, getenv: e.getenv, dir: e.dir, now: e.now}
	defer func() {
		if e2.repo != nil {
			e2.repo.Close()
		}
	}()
	_, next, err := openCycle(e2)
	if err != nil || next == nil {
		return agents.Answer{}, fmt.Errorf("%s; the next cycle was started but is not open: %v", done, err)
	}
	brief, err := cycleBrief(e2, next, work)
	if err != nil {
		return agents.Answer{}, err
	}
	if said != "" {
		said = "What the finish said:\n\n" + said + "\n\n"
	}
	return agents.Answer{
		Continue: done + ".\n\n" + said + "The loop goes on: cycle " + strconv.Itoa(next.Cycle) + " is open. Do its work, then end your turn.\n\n" + brief,
		Message:  termLine(fmt.Sprintf("git-evolve: %s; cycle %d started (target %s)", done, next.Cycle, next.Target)),
	}, nil
}

// failureLines are what the finish said went wrong (its warnings and
// the goals that regressed), for the agent's next turn.
func failureLines(stderr []byte) string {
	var out []string
	for _, l := range strings.Split(escape.Terminal(string(stderr)), "\n") {
		if l = strings.TrimSpace(l); l != "" && len(out) < 20 {
			out = append(out, strings.TrimPrefix(l, "git-evolve: "))
		}
	}
	return strings.Join(out, "\n")
}

// firstError is the first line of a command's error output.
func firstError(stderr []byte) string {
	line, _, _ := strings.Cut(strings.TrimSpace(string(stderr)), "\n")
	return strings.TrimPrefix(strings.TrimPrefix(line, "git-evolve: "), "error: ")
}

var (
	// refusedCommand is a shell command that runs what only the operator,
	// or the finish, runs.
	refusedCommand = sync.OnceValue(func() *regexp.Regexp {
		// git's options before evolve (-C, -c, --no-pager…), a path to
		// git or git-evolve, git-evolve's own options before the command
		// (-C, --color, -q…), and a command quoted for sh -c.
		return regexp.MustCompile(`(?:^|[\s;&|('"\x60])(?:\S*/)?git(?:\s+(?:-[Cc]\s+\S+|-\S+))*(?:\s+|-)evolve\s+(?:(?:-C|--chdir|--color)\s+\S+\s+|-\S+\s+)*(cycle\s+(?:finish|abort)|stop|kill|resume|trust|record)\b`)
	})
	// writes is a shell command that writes files.
	writes = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`>|\b(?:tee|rm|mv|cp|ln|chmod|truncate|dd|install|touch|patch)\b|\bsed\s+(?:-\S*\s+)*-i|\bperl\s+(?:-\S*\s+)*-\S*i`)
	})
	gitDirNamed = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?:^|[\s'"=<>(:/])\.git(?:/|\s|$|['"])`) })
)

func preToolAnswer(e *env, p *agents.Payload) (agents.Answer, error) {
	l, c, err := openCycle(e)
	if err != nil || c == nil {
		return agents.Answer{}, err
	}
	repo := l.Repo()
	top, err := repo.WorkTree()
	if err != nil {
		return agents.Answer{}, nil
	}
	goalsPath, _ := goals.Locate(top)
	goalsName := filepath.Base(goalsPath)
	gitDirs := []string{filepath.Join(top, ".git"), repo.GitDir(), repo.CommonDir()}
	deny := func(why string) agents.Answer {
		return agents.Answer{Deny: fmt.Sprintf("git-evolve: cycle %d is open: %s", c.Cycle, why)}
	}
	if agents.IsFinishTool(p.Tool) {
		return deny("the Stop hook finishes the cycle when you end your turn: do not finish or abort it yourself."), nil
	}
	for _, path := range p.Paths {
		abs := path
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(e.dir, abs)
		}
		abs = resolved(filepath.Clean(abs))
		if abs == resolved(goalsPath) {
			return deny(goalsName + " is the cycle's ruler, held as it was when the cycle started: an edit of it cannot pass the cycle. Work on the code instead."), nil
		}
		for _, d := range gitDirs {
			if d != "" && (abs == resolved(d) || strings.HasPrefix(abs, resolved(d)+string(filepath.Separator))) {
				return deny("edits under the git directory are refused during a cycle (the ledger, the cycle's state and the hooks are there); commit with git, or leave the work uncommitted."), nil
			}
		}
	}
	if why := shellDenial(p.Command, goalsName); why != "" {
		return deny(why), nil
	}
	return agents.Answer{}, nil
}

// shellDenial says why a shell command is refused during a cycle ("" when
// it is not): it runs what only the operator or the finish runs, or it
// writes and names the git directory or the goals file. It reads the
// command as text, a first line: the judge holds the ruler whatever runs.
func shellDenial(cmd, goalsName string) string {
	if cmd == "" {
		return ""
	}
	if m := refusedCommand().FindStringSubmatch(cmd); m != nil {
		return "git evolve " + strings.Join(strings.Fields(m[1]), " ") + " is not the agent's to run: end your turn and the Stop hook finishes the cycle; only the operator stops or resumes the loop."
	}
	if writes().MatchString(cmd) {
		if gitDirNamed().MatchString(cmd) {
			return "a shell command that writes and names .git is refused during a cycle; commit with git, or leave the work uncommitted."
		}
		if goalsName != "" && strings.Contains(cmd, goalsName) {
			return "a shell command that writes and names " + goalsName + " is refused: it is the cycle's ruler, held as it was when the cycle started."
		}
	}
	return ""
}

// resolved is path with its symbolic links resolved, as far as they exist.
func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	dir, base := filepath.Split(path)
	if dir == "" || dir == path {
		return path
	}
	return filepath.Join(resolved(filepath.Clean(dir)), base)
}
