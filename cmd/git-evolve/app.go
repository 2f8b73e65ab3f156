package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
	"golang.org/x/term"

	"github.com/git-evolve/git-evolve/audit"
	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// cli is the whole command line.
type cli struct {
	globals `embed:""`

	Init   initCmd   `cmd:"" help:"Make the repository ready for the ledger (git config, fetch refspecs)."`
	Record recordCmd `cmd:"" help:"Record one cycle in the ledger (drop-in for evolve-log-cycle.sh)."`
	Log    logCmd    `cmd:"" help:"List the cycles in the ledger."`
	Show   showCmd   `cmd:"" help:"Show the whole record of a cycle or of a commit."`
	Import importCmd `cmd:"" help:"Import an existing cycle-history.jsonl into the ledger."`
	Export exportCmd `cmd:"" help:"Print the whole ledger as canonical JSON Lines."`
	Report reportCmd `cmd:"" help:"Markdown for a pull request: the range's net fitness and its cycles, with the reasons of the failed ones."`
	Sync   syncCmd   `cmd:"" help:"Fetch, merge and push the ledger (and the other evolve notes) with a remote."`
	Verify verifyCmd `cmd:"" help:"Check the ledger: parses, unique ids, trailers, the chain of records, its history."`
	Repair repairCmd `cmd:"" help:"Put back the records verify finds edited or deleted, from the ledger's history; or accept a breach."`
	Relink relinkCmd `cmd:"" help:"Attach records to the commits a cherry-pick, squash merge or rebase made of their work."`
	Cycle  cycleCmd  `cmd:"" help:"Open, inspect and close cycles."`
	Revert revertCmd `cmd:"" help:"Revert a finished cycle later, as a recorded commit."`
	Goals  goalsCmd  `cmd:"" help:"Check and measure the goals in GOALS.yaml."`
	Trust  trustCmd  `cmd:"" help:"Let this machine run the checks of the goals file as it is now."`

	Status     statusCmd     `cmd:"" help:"Say where the loop stands: the open cycle, halts, the last cycles, failing goals, the queue, the ledger against its remote."`
	Run        runCmd        `cmd:"" help:"Run the loop with an agent command: halt-check, next, cycle start, the agent, cycle finish, again."`
	Next       nextCmd       `cmd:"" help:"Say which work the next cycle takes, from which rung of the ladder, and why."`
	HaltCheck  haltCheckCmd  `cmd:"" name:"halt-check" help:"Say whether the loop may run its next cycle (exit 0; 3 when it must be restorative) or is halted (exit 4), and why."`
	Stop       stopCmd       `cmd:"" help:"Halt this repository's loop at its next halt-check (.agents/evolve/STOP)."`
	Kill       killCmd       `cmd:"" help:"Halt every loop of this user on this machine (~/.config/evolve/KILL)."`
	Resume     resumeCmd     `cmd:"" help:"Lift KILL, STOP and DORMANT and acknowledge tripped breakers (recorded in git)."`
	Converged  convergedCmd  `cmd:"" help:"Say whether the loop has converged, from the ledger, the queue and the baseline."`
	Queue      queueCmd      `cmd:"" help:"List, claim, consume and release the work queue's items."`
	Hypothesis hypothesisCmd `cmd:"" help:"Add, list, judge and find due hypotheses (kept in git)."`

	Mcp        mcpCmd        `cmd:"" name:"mcp" help:"Serve the loop to an agent over the Model Context Protocol (stdio): status, next, cycles, goals, the ledger; never stop, kill, resume or trust."`
	Hook       hookCmd       `cmd:"" help:"What the installed git hooks run."`
	Demo       demoCmd       `cmd:"" help:"Run ${demo_cycles} scripted cycles in a throw-away repository, to see what git-evolve does."`
	Version    versionCmd    `cmd:"" help:"Print git-evolve's version."`
	Completion completionCmd `cmd:"" help:"Print a shell completion script: bash, zsh or fish."`
	InstallMan installManCmd `cmd:"" name:"install-man" help:"Install the manual pages, which git evolve --help and git help evolve show."`
	Complete   completeCmd   `cmd:"" name:"__complete" hidden:"" help:"List the completions of a command line (what the completion scripts run)."`
	Help       helpCmd       `cmd:"" help:"Describe git-evolve, or one of its commands (what --help prints)."`
}

// globals are the flags that come before the command.
type globals struct {
	Chdir       string      `short:"C" name:"chdir" placeholder:"PATH" help:"Run as if git-evolve was started in PATH."`
	VersionFlag versionFlag `name:"version" help:"Print git-evolve's version and exit."`
	Color       string      `name:"color" enum:"auto,always,never" default:"auto" placeholder:"WHEN" help:"Colour the output: auto (a terminal, as color.evolve and color.ui say), always or never."`
	Quiet       bool        `short:"q" name:"quiet" help:"Print nothing but errors, warnings and hints, and what was asked for (--json, a listing, a report); no progress."`
}

const description = `The harness and the shared ledger for evolve loops.

Each cycle is a git note on the commit it delivered (refs/notes/evolve), so the
history of what the loop did is cloned, fetched and pushed with the repository.

Exit codes: 0 ok, 1 runtime error, 2 integrity breach, 3 recoverable failure
(a cycle regressed and was reverted), 4 halted, 5 paused, 10 usage error.`

// helpVars are the values help texts take from the code: ${demo_cycles}.
// Every parser of the grammar is built with them.
var helpVars = kong.Vars{"demo_cycles": numberWord(demoCycleCount)}

// env is what commands work with: streams, the clock, and the repository,
// opened on first use so that --help and version work anywhere.
type env struct {
	ctx            context.Context // cancelled by an interrupt
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	colorMode      string // --color: auto, always or never
	paging         bool   // stdout is the pager page started
	quiet          bool   // -q
	noProgress     bool   // --no-progress
	forceProgress  bool   // --progress
	dir            string
	now            func() time.Time
	repo           *gitstore.Repo
	ledger         *cycle.Ledger
	copiesTold     bool // the remote-tracking copies left out are said already
}

// Repo opens the repository git would use in the working directory.
func (e *env) Repo() (*gitstore.Repo, error) {
	return e.open()
}

// open opens the repository, with opts when it is not open yet.
func (e *env) open(opts ...gitstore.Option) (*gitstore.Repo, error) {
	if e.repo == nil {
		r, err := gitstore.Open(e.dir, opts...)
		if err != nil {
			return nil, err
		}
		e.repo = r
	}
	return e.repo, nil
}

// Ledger opens the repository's ledger for reading.
func (e *env) Ledger() (*store.Ledger, error) {
	l, err := e.cyclesWith()
	if err != nil {
		return nil, err
	}
	return l.Ledger, nil
}

// Cycles opens the ledger for a command that records or moves a cycle
// through the cycle package's rules.
func (e *env) Cycles() (*cycle.Ledger, error) { return e.cyclesWith() }

// CycleLedger opens the ledger for a command that moves a cycle through its
// steps (finish, revert): GIT_EVOLVE_TEST_DIE_AT kills it at a step, for the
// tests of an interrupted finish.
func (e *env) CycleLedger() (*cycle.Ledger, error) {
	l, err := e.Cycles()
	if err == nil {
		// It commits and reads settings: git var and git config start now,
		// beside the capture of the working tree.
		l.Repo().PrefetchIdentity()
		l.Repo().PrefetchConfig()
	}
	if err == nil && e.getenv("GIT_EVOLVE_TEST_DIE_AT") != "" {
		l.DieAt(e.getenv("GIT_EVOLVE_TEST_DIE_AT"))
	}
	return l, err
}

// WritableLedger opens the repository's ledger for a command that writes
// it: the git processes of the write start while the repository is found.
// reason is the reflog message of the ledger's update.
func (e *env) WritableLedger(reason string) (*store.Ledger, error) {
	l, err := e.cyclesWith(gitstore.ForWriting(reason))
	if err != nil {
		return nil, err
	}
	return l.Ledger, nil
}

// cyclesWith opens the ledger once a command, with opts for the repository
// when it is not open yet: the store every read of the command shares (and
// the copies it refused, which copyNotices tells), with the cycles' rules.
func (e *env) cyclesWith(opts ...gitstore.Option) (*cycle.Ledger, error) {
	if e.ledger == nil {
		r, err := e.open(opts...)
		if err != nil {
			return nil, err
		}
		// A remote's copy is read only when it passes sync's check.
		e.ledger = cycle.Open(r, e.now)
		e.ledger.CheckCopies(audit.CopyCheck(r))
	}
	return e.ledger, nil
}

// path resolves a path the user typed against the working directory.
func (e *env) path(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(e.dir, p)
}

// color reports whether stdout is coloured: --color=always or never as
// given; else (auto) not with NO_COLOR set (https://no-color.org) or a dumb
// terminal, and, on a terminal or a pager git started (git -p,
// GIT_PAGER_IN_USE), as git decides from color.evolve and color.ui.
func (e *env) color() bool {
	switch e.colorMode {
	case "always":
		return true
	case "never":
		return false
	}
	if e.getenv("NO_COLOR") != "" || e.getenv("TERM") == "dumb" {
		return false
	}
	tty := terminal(e.stdout) || e.paging || e.getenv("GIT_PAGER_IN_USE") == "true"
	if !tty {
		return false // color.ui = always is for git's own commands' pipes
	}
	return gitstore.ColorBool(e.dir, "color.evolve", true)
}

// progress prints what a long command is doing on stderr, as git does:
// only when stderr is a terminal.
func (e *env) progress(msg string) {
	if terminal(e.stderr) && !e.noProgress && !e.quiet {
		fmt.Fprintf(e.stderr, "git-evolve: %s…\n", msg)
	}
}

// progressFlag is --no-progress, on the commands that measure goals.
type progressFlag struct {
	NoProgress bool `name:"no-progress" help:"Print no progress. On a terminal it is one line; elsewhere a line every ten seconds once a measure has run two."`
	Progress   bool `name:"progress" help:"Print progress lines from the start even when stderr is no terminal."`
}

// set makes the flags the command's.
func (p progressFlag) set(e *env) {
	e.noProgress, e.forceProgress = p.NoProgress, p.Progress && !p.NoProgress
}

// goalProgress reports goals measured (goalMeter, progress.go). onCheck
// is told each goal as its check starts, onDone as it ends (one call at a
// time: goals.Options makes them so); done ends the report.
func (e *env) goalProgress(what string, n int) (onCheck, onDone func(string), done func()) {
	if e.noProgress || e.quiet || n == 0 {
		return nil, nil, func() {}
	}
	m := newGoalMeter(e.stderr, what, n, terminal(e.stderr), e.forceProgress, time.Now)
	m.start()
	return m.check, m.done, m.finish
}

// terminal reports whether w is a terminal, as isatty(3) says: /dev/null
// is a character device too, and neither pages nor colours.
func terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// exitRequest carries kong's request to exit (after --help) out of the parser.
type exitRequest struct{ code int }

func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	return runContext(context.Background(), args, stdin, stdout, stderr, getenv)
}

// runContext is run within parent: its end (an MCP request cancelled)
// ends the command as an interrupt would.
func runContext(parent context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) (code int) {
	var c cli
	wd, err := os.Getwd()
	if err != nil {
		printError(stderr, err)
		return exitRuntime
	}
	// An interrupt (Ctrl-C) or SIGTERM cancels ctx: running checks are ended
	// (they run in process groups of their own, out of the terminal's reach).
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, dir: wd, ctx: ctx}
	e.now = e.clock
	defer func() {
		if r := recover(); r != nil {
			x, ok := r.(exitRequest)
			if !ok {
				// A bug: say so, with what a report needs, and do not let it
				// pass for an integrity breach (a crash exits 2).
				fmt.Fprintf(stderr, "git-evolve: error: internal error: %v\n%s", r, debug.Stack())
				code = exitRuntime
			} else {
				code = x.code
			}
		}
		if e.repo != nil {
			e.repo.Close()
		}
	}()
	opts := []kong.Option{
		kong.Name("git-evolve"),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { panic(exitRequest{code}) }),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Bind(e),
		helpVars,
	}
	var grammar any = &c
	if one, ok := oneCommand(&c, args); ok && !wholeGrammar {
		// Only the command named is built: kong's model of every command
		// costs a few milliseconds of each start, more than most commands.
		grammar = &c.globals
		opts = append(opts, one)
	}
	parser, err := kong.New(grammar, opts...)
	if err != nil {
		printError(stderr, err)
		return exitRuntime
	}
	if len(args) == 0 {
		args = []string{"--help"}
	}
	kctx, err := parser.Parse(args)
	if err != nil {
		printError(stderr, withHint(err, "see 'git evolve help"+commandOf(parser, args)+"'"))
		return exitUsage
	}
	e.colorMode = c.Color
	if c.Quiet {
		e.quiet = true
		if !answers(kctx) {
			e.stdout = io.Discard
		}
	}
	if c.Chdir != "" {
		e.dir = e.path(c.Chdir)
		if fi, err := os.Stat(e.dir); err != nil || !fi.IsDir() {
			printError(stderr, usagef("-C %s: not a directory", c.Chdir))
			return exitUsage
		}
	}
	err = kctx.Run()
	e.copyNotices()
	keepSeedHistory(e, kctx.Command(), err) // the seeds' cycle-history.jsonl follows the ledger (seedfiles.go)
	if err != nil {
		if errors.Is(err, errPagerGone) {
			return exitOK // the user quit the pager before the end, as with git log
		}
		printError(stderr, err)
		return exitCode(err)
	}
	return exitOK
}

// asked are the commands whose output is what the user asked for: a
// listing, a report, an answer. -q leaves it (it takes their progress and
// notices); every other command's output is talk, which -q silences.
var asked = map[string]bool{
	"log": true, "show": true, "export": true, "report": true, "verify": true, "status": true, "next": true,
	"halt-check": true, "converged": true, "goals validate": true, "goals measure": true, "goals history": true,
	"cycle status": true, "queue list": true, "hypothesis list": true, "hypothesis due": true, "version": true,
	"completion": true, "__complete": true, "help": true, "mcp": true,
	"hook agent": true, // its output is the agent's answer
}

// answers says whether -q leaves the command's output: a command asked
// for, or one told to print JSON or to say what it would do (--dry-run).
func answers(kctx *kong.Context) bool {
	var words []string
	for _, w := range strings.Fields(kctx.Command()) {
		if !strings.HasPrefix(w, "<") {
			words = append(words, w)
		}
	}
	if asked[strings.Join(words, " ")] {
		return true
	}
	for _, f := range kctx.Flags() {
		if f.Name == "json" || f.Name == "jsonl" || f.Name == "dry-run" {
			if v, ok := kctx.FlagValue(f).(bool); ok && v {
				return true
			}
		}
	}
	return false
}

// wholeGrammar makes every start build the whole grammar (for the test that
// compares the two).
var wholeGrammar = false

// oneCommand is the kong option that adds the one command args name, when
// the words before it are global flags only; false when they name none (no
// command, a typo, help), which the whole grammar answers.
func oneCommand(c *cli, args []string) (kong.Option, bool) {
	name := ""
	for i := 0; i < len(args) && name == ""; i++ {
		switch a := args[i]; {
		case a == "-C" || a == "--chdir" || a == "--color":
			i++
		case strings.HasPrefix(a, "-C") || strings.HasPrefix(a, "--chdir=") || strings.HasPrefix(a, "--color="), a == "-q" || a == "--quiet":
		case strings.HasPrefix(a, "-"):
			return nil, false // --help, --version, --, a flag the whole grammar judges
		default:
			name = a
		}
	}
	if name == "" || name == "help" {
		return nil, false
	}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if _, ok := f.Tag.Lookup("cmd"); !ok {
			continue
		}
		cmdName := f.Tag.Get("name")
		if cmdName == "" {
			cmdName = strings.ToLower(f.Name)
		}
		if cmdName == name {
			return kong.DynamicCommand(cmdName, f.Tag.Get("help"), "", v.Field(i).Addr().Interface(), string(f.Tag)), true
		}
	}
	return nil, false
}

// commandOf is the command (and subcommands) raw arguments name, for the
// usage hint: " " and their names, "" when the first names no command.
func commandOf(parser *kong.Kong, args []string) string {
	node, out := parser.Model.Node, ""
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		var next *kong.Node
		for _, c := range node.Children {
			if c.Type == kong.CommandNode && (c.Name == a || slices.Contains(c.Aliases, a)) {
				next = c
			}
		}
		if next == nil {
			break
		}
		node, out = next, out+" "+next.Name
	}
	return out
}

// clock is the time records are stamped with: GIT_COMMITTER_DATE when it
// is set (as git does for commits, which also makes output reproducible),
// read by git itself when it is in a format only git reads, so that a
// record and its notes commit always agree; the system clock otherwise.
func (e *env) clock() time.Time {
	d := e.getenv("GIT_COMMITTER_DATE")
	if d == "" {
		return time.Now()
	}
	if t, ok := gitstore.ParseDate(d); ok {
		return t
	}
	if e.repo != nil {
		if _, c, err := e.repo.Identity(); err == nil {
			return c.When
		}
	}
	return time.Now()
}

// notFound turns store.ErrNotFound into a usage error (the user named
// something that is not there).
func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return usagef("%s", strings.TrimPrefix(err.Error(), store.ErrNotFound.Error()+": "))
	}
	return err
}
