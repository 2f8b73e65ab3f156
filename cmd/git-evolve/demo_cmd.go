package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
)

type demoCmd struct {
	Dir string `arg:"" optional:"" help:"Where to build the demo repository (default: a new temporary directory); it must not exist or be empty." placeholder:"DIR"`
}

func (demoCmd) Help() string {
	return `Builds a throw-away repository with a small project (greet.sh), a GOALS.yaml
and a test command, then runs ` + numberWord(demoCycleCount) + ` scripted cycles the way an agent would:

  1. one that adds what a failing goal asks for: improved, committed;
  2. one that breaks a goal that passed: regressed, reverted, its work saved;
  3. one that only writes notes in .agents/: unchanged, journal only;
  4. one driven by git evolve run, with a scripted agent command: the driver
     picks the failing goal, runs the agent and judges its work: improved.

Each git evolve command is shown with its output, then the ledger. The
repository is left in place to look at (its path is printed).`
}

// demoFiles is the project the demo starts from: a greeting script with a
// test, goals of which two fail, and a README without usage.
var demoFiles = map[string]string{
	"greet.sh": `#!/bin/sh
# greet.sh NAME: prints a greeting.
echo "hello, $1"
`,
	"test.sh": `#!/bin/sh
# The project's tests: greet.sh greets by name.
got=$(sh greet.sh Ada)
if [ "$got" != "hello, Ada" ]; then
  echo "FAIL: sh greet.sh Ada printed '$got', want 'hello, Ada'"
  exit 1
fi
echo "tests passed"
`,
	"README.md": "# greet\n\nA greeting.\n",
	"GOALS.yaml": `version: 3
mission: A greeting that works and says how to use it.
gate: "sh test.sh"
goals:
  - id: greets
    description: greet.sh greets by name
    check: "sh greet.sh Ada | grep -qx 'hello, Ada'"
    weight: 5
  - id: has-help
    description: greet.sh --help says how to use it
    check: "sh greet.sh --help | grep -q '^usage:'"
    weight: 3
  - id: documented
    description: the README shows how to run it
    check: "grep -q 'sh greet.sh' README.md"
    weight: 2
`,
	".gitignore": "*.log\n",
}

// demoCycleCount is how many cycles the demo runs: the scripted ones, then
// one driven by git evolve run. The help says it (${demo_cycles}).
const demoCycleCount = len(demoCycles) + 1

// numberWord is n in words, as the help says it (n itself past ten).
func numberWord(n int) string {
	words := [...]string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}

// demoCycle is one scripted cycle: what the agent writes and commits
// itself, then what it writes and leaves for the finish to commit.
type demoCycle struct {
	title     string
	target    string
	message   string
	committed map[string]string
	commit    string // the message of the agent's own commit
	edits     map[string]string
}

// demoCycles are the cycles the demo scripts itself; one driven by git
// evolve run follows them.
var demoCycles = [...]demoCycle{
	{
		title:  "cycle 1: the agent adds --help, which the goal has-help asks for, and a test",
		target: "has-help",
		committed: map[string]string{
			"greet.sh": `#!/bin/sh
# greet.sh NAME: prints a greeting.
if [ "$1" = --help ]; then
	echo "usage: sh greet.sh NAME"
	exit 0
fi
echo "hello, $1"
`,
		},
		commit: "greet.sh: --help",
		edits: map[string]string{
			"test.sh": `#!/bin/sh
# The project's tests: greet.sh greets by name, and says how to use it.
got=$(sh greet.sh Ada)
if [ "$got" != "hello, Ada" ]; then
  echo "FAIL: sh greet.sh Ada printed '$got', want 'hello, Ada'"
  exit 1
fi
if ! sh greet.sh --help | grep -q '^usage:'; then
  echo "FAIL: sh greet.sh --help says no usage"
  exit 1
fi
echo "tests passed"
`,
		},
		message: "greet.sh: say how to use it",
	},
	{
		title:  "cycle 2: the agent documents the script and 'tidies' it, breaking the greeting",
		target: "documented",
		edits: map[string]string{
			"README.md": "# greet\n\nA greeting.\n\n    sh greet.sh NAME\n",
			"greet.sh": `#!/bin/sh
# greet.sh NAME: prints a greeting.
if [ "$1" = --help ]; then
	echo "usage: sh greet.sh NAME"
	exit 0
fi
echo "hello $1"
`,
			".agents/notes.md": "- cycle 2: keep the comma in the greeting; test.sh checks it.\n",
		},
		message: "document greet.sh",
	},
	{
		title:  "cycle 3: the agent only takes notes in .agents/",
		target: "documented",
		edits: map[string]string{
			".agents/notes.md": "- cycle 2: keep the comma in the greeting; test.sh checks it.\n- cycle 3: document without touching greet.sh.\n",
		},
	},
}

// demoAgent is the agent command of the driven cycle: it does what the
// driver chose, as its environment names it. It lives under .agents/, which
// is no substantive change.
const demoAgentPath = ".agents/demo-agent.sh"

const demoAgent = `#!/bin/sh
# The demo's agent: git evolve run names the work in EVOLVE_TARGET, and in
# the brief at EVOLVE_BRIEF (the failing goals, the last failures).
echo "agent: cycle $EVOLVE_CYCLE, target $EVOLVE_TARGET; the brief: $(sed -n 1p "$EVOLVE_BRIEF")"
case "$EVOLVE_TARGET" in
documented) printf '\nRun it:\n\n    sh greet.sh NAME\n' >> README.md
  echo '- cycle 4: documented how to run it.' >> .agents/notes.md ;;
esac
`

func (c *demoCmd) Run(e *env) error {
	dir, err := demoDir(e, c.Dir)
	if err != nil {
		return err
	}
	// The demo works in its own repository, whatever repository the user
	// is in, and runs the hooks it installs with this very binary.
	for _, k := range []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY", "GIT_COMMON_DIR", "GIT_EVOLVE_TEST_DIE_AT"} {
		os.Unsetenv(k)
	}
	if exe, err := os.Executable(); err == nil {
		os.Setenv("PATH", filepath.Dir(exe)+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	getenv := func(k string) string {
		if k == "GIT_EVOLVE_TEST_DIE_AT" {
			return ""
		}
		return e.getenv(k)
	}
	fmt.Fprintf(e.stdout, "git evolve demo: a throw-away repository in %s\n", dir)
	if err := gitstore.InitRepository(dir); err != nil {
		return err
	}
	for name, content := range demoFiles {
		if err := writeDemoFile(dir, name, content); err != nil {
			return err
		}
	}
	repo, err := gitstore.Open(dir)
	if err != nil {
		return err
	}
	defer repo.Close()
	if err := demoIdentity(repo, getenv); err != nil {
		return err
	}
	if _, err := repo.CommitAll("greet: a greeting with goals"); err != nil {
		return err
	}
	step := func(want int, args ...string) error {
		fmt.Fprintf(e.stdout, "\n$ git evolve %s\n", shellWords(args))
		// stderr goes with stdout: the demo is one transcript, in order.
		code := run(append([]string{"-C", dir}, args...), e.stdin, e.stdout, e.stdout, getenv)
		if code != want {
			return fmt.Errorf("the demo went off its script: git evolve %s exited %d, not %d", strings.Join(args, " "), code, want)
		}
		return nil
	}
	if err := step(exitOK, "init"); err != nil {
		return err
	}
	if err := step(exitOK, "goals", "measure"); err != nil {
		return err
	}
	wants := []int{exitOK, exitRecoverable, exitOK}
	for i, cy := range demoCycles {
		fmt.Fprintf(e.stdout, "\n# %s\n", cy.title)
		if err := step(exitOK, "cycle", "start", "--target", cy.target); err != nil {
			return err
		}
		if cy.commit != "" {
			for name, content := range cy.committed {
				if err := writeDemoFile(dir, name, content); err != nil {
					return err
				}
			}
			fmt.Fprintf(e.stdout, "\n$ git commit -am %q   (the commit-msg hook adds the cycle's trailers)\n", cy.commit)
			if _, err := repo.CommitAll(cy.commit); err != nil {
				return err
			}
		}
		for name, content := range cy.edits {
			if err := writeDemoFile(dir, name, content); err != nil {
				return err
			}
		}
		args := []string{"cycle", "finish"}
		if cy.message != "" {
			args = append(args, "-m", cy.message)
		}
		if err := step(wants[i], args...); err != nil {
			return err
		}
	}
	fmt.Fprintf(e.stdout, "\n# cycle 4: the same loop, driven by the tool: git evolve run checks that the\n# loop may go on, picks the work (the failing goal), opens the cycle, runs the\n# agent command with the work in its environment and brief, and judges it\n")
	if err := writeDemoFile(dir, demoAgentPath, demoAgent); err != nil {
		return err
	}
	if err := step(exitOK, "run", "--agent", "sh "+demoAgentPath, "--max-cycles", "1"); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\n# the ledger: cycles 1, 2 and 4 are notes on their commits, cycle 3 is in the local journal\n")
	if err := step(exitOK, "log", "--all"); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "\nExplore it: cd %s && git log --notes=evolve, git evolve show 2\n", dir)
	return nil
}

// demoDir returns the directory to build the demo in: dir (relative to
// the working directory, -C's), which must not exist or be empty, or a new
// temporary one.
func demoDir(e *env, dir string) (string, error) {
	if dir == "" {
		return os.MkdirTemp("", "git-evolve-demo-")
	}
	abs := e.path(dir)
	entries, err := os.ReadDir(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return abs, os.MkdirAll(abs, 0o755)
	case err != nil:
		return "", usagef("%s: %v", dir, err)
	case len(entries) > 0:
		return "", usagef("%s is not empty: the demo builds its repository in a new or empty directory", dir)
	}
	return abs, nil
}

func writeDemoFile(dir, name, content string) error {
	p := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}

// demoIdentity names who commits in the demo repository when the user's git
// has no identity (a new machine): the demo must not stop on it.
func demoIdentity(repo *gitstore.Repo, getenv func(string) string) error {
	for key, val := range map[string]string{"user.name": "git-evolve demo", "user.email": "demo@git-evolve.invalid"} {
		have, err := repo.ConfigGetAll(key)
		if err != nil {
			return err
		}
		envKey := "GIT_AUTHOR_NAME"
		if key == "user.email" {
			envKey = "GIT_AUTHOR_EMAIL"
		}
		if len(have) == 0 && getenv(envKey) == "" {
			if err := repo.ConfigAdd(key, val); err != nil {
				return err
			}
		}
	}
	return nil
}

// shellWords writes args as a shell would read them back.
func shellWords(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}
