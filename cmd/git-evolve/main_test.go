package main

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/git-evolve/git-evolve/internal/mcpserver"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain runs the tests with a git of their own (internal/testenv); the
// scripts have their own HOME besides (setupScript).
func TestMain(m *testing.M) {
	testscript.Main(hermetic{m}, map[string]func(){
		"git-evolve": func() { os.Exit(Main()) },
		// The MCP server, as its own program, and a client of it.
		"git-evolve-mcp": func() { os.Exit(mcpserver.Main("", os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
		"mcp-client":     func() { os.Exit(mcpClientMain()) },
		// One section of the view's file, read, replaced or asked for (kept_cmd_test.go).
		"kept": func() { os.Exit(keptMain()) },
	})
}

// hermetic runs the tests as testenv.Main does.
type hermetic struct{ m *testing.M }

func (h hermetic) Run() int { return testenv.Main(h.m) }

// TestScripts runs the testscript suites in testscripts/<area>/. Set
// UPDATE_SCRIPTS=1 to rewrite the golden files inside the archives.
func TestScripts(t *testing.T) {
	dirs, err := filepath.Glob("../../testscripts/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || alone[filepath.Base(dir)] {
			continue
		}
		if testing.Short() && !shortSuites[filepath.Base(dir)] {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			testscript.Run(t, scriptParams(dir))
		})
	}
}

// shortSuites are the suites go test -short runs (the inner loop's): the CLI's
// face and the ledger's reads and writes.
var shortSuites = map[string]bool{"cli": true, "ledger": true}

// alone are the suites that run after every other suite has finished, not
// beside them: the protocol suite's clones race each other for the remote,
// and its figures (attempts, lost races, wall time) are to measure that
// race, not a machine shared with every other script.
var alone = map[string]bool{"protocol": true}

// TestScriptsAlone runs the suites in alone; being a later top-level test,
// it starts once TestScripts and all its scripts are done.
func TestScriptsAlone(t *testing.T) {
	testenv.Slow(t)
	for dir := range alone {
		t.Run(dir, func(t *testing.T) {
			testscript.Run(t, scriptParams(filepath.Join("../../testscripts", dir)))
		})
	}
}

func scriptParams(dir string) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("UPDATE_SCRIPTS") != "",
		Setup:               setupScript,
		Condition:           scriptCondition,
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"commits": cmdCommits,
			"daemon":  cmdDaemon,
		},
	}
}

// scriptCondition answers the conditions the suites use beyond the built-in
// ones: [pty] is true when a pseudo-terminal can be opened (ttyin needs one);
// [german] when git speaks German with LANGUAGE=de (its translations are
// installed); [gitcompletion] when git's bash completion is installed.
func scriptCondition(cond string) (bool, error) {
	switch cond {
	case "daemon":
		out, err := exec.Command("git", "--exec-path").Output()
		if err != nil {
			return false, nil
		}
		_, err = os.Stat(filepath.Join(strings.TrimSpace(string(out)), "git-daemon"))
		return err == nil, nil
	case "german":
		// git speaks German when asked (its translations are installed).
		cmd := exec.Command("git", "rev-parse", "--git-dir")
		cmd.Dir = os.TempDir()
		cmd.Env = append(os.Environ(), "LANGUAGE=de", "LANG=C.UTF-8", "LC_ALL=", "GIT_CEILING_DIRECTORIES="+os.TempDir())
		out, _ := cmd.CombinedOutput()
		return strings.Contains(string(out), "Kein Git-Repository"), nil
	case "gitcompletion":
		// git's bash completion where distributions install it
		_, err := os.Stat("/usr/share/bash-completion/completions/git")
		return err == nil, nil
	case "pty":
		f, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
		if err != nil {
			return false, nil
		}
		f.Close()
		return true, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// setupScript gives every script a hermetic git: its own HOME and global
// config, a fixed identity and fixed dates (so object names are golden),
// and no automatic maintenance after each commit (testenv.GlobalConfig).
func setupScript(e *testscript.Env) error {
	home := e.Getenv("WORK")
	e.Setenv("HOME", home)
	e.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	e.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	e.Setenv("GIT_AUTHOR_NAME", "Ada Author")
	e.Setenv("GIT_AUTHOR_EMAIL", "ada@example.com")
	e.Setenv("GIT_COMMITTER_NAME", "Cy Committer")
	e.Setenv("GIT_COMMITTER_EMAIL", "cy@example.com")
	e.Setenv("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
	e.Setenv("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
	e.Setenv("NO_COLOR", "")
	e.Setenv("GIT_EVOLVE_HOST", "testhost") // records name the machine they were made on
	e.Setenv("TZ", "UTC")
	// Scripts that run go test share the build cache of the tests' own go
	// (HOME is the script's, so go's default would be a cold cache).
	e.Setenv("TEST_GOCACHE", goCache())
	// Scripts that run cargo find its toolchain where rustup installed it
	// for the tests' user (HOME is the script's).
	if h := rustupHome(); h != "" {
		e.Setenv("RUSTUP_HOME", h)
	}
	// The drop-in scripts, for the scripts that run the seeds' snippets.
	contrib, err := filepath.Abs("../../contrib")
	if err != nil {
		return err
	}
	e.Setenv("CONTRIB", contrib)
	// The Action's scripts, for the scripts that run its steps.
	action, err := filepath.Abs("../../.github")
	if err != nil {
		return err
	}
	e.Setenv("ACTION", action)
	gitconfig := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada Author\n\temail = ada@example.com\n" + testenv.GlobalConfig
	return os.WriteFile(filepath.Join(home, ".gitconfig"), []byte(gitconfig), 0o644)
}

// goCache is the build cache of the go that runs the tests ("" when go
// cannot say).
var goCache = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
})

// rustupHome is where rustup keeps the toolchains of the user who runs the
// tests ("" when there is no such directory).
var rustupHome = sync.OnceValue(func() string {
	h := os.Getenv("RUSTUP_HOME")
	if h == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		h = filepath.Join(home, ".rustup")
	}
	if fi, err := os.Stat(h); err != nil || !fi.IsDir() {
		return ""
	}
	return h
})

// cmdCommits makes N commits in the repository in the current directory:
// `commits N [prefix]`. Commit i adds the file <prefix>i.txt with the
// message "<prefix> i". Each commit's dates step one minute from
// GIT_COMMITTER_DATE, so object names stay the same run after run.
func cmdCommits(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! commits")
	}
	if len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: commits N [prefix]")
	}
	n, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("commits: %v", err)
	}
	prefix := "c"
	if len(args) == 2 {
		prefix = args[1]
	}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("%s%d.txt", prefix, i)
		ts.Check(os.WriteFile(ts.MkAbs(name), []byte(name+"\n"), 0o644))
		date := fmt.Sprintf("@%d +0000", 1767323045+60*i)
		for _, a := range [][]string{{"add", name}, {"commit", "-q", "-m", fmt.Sprintf("%s %d", prefix, i)}} {
			cmd := exec.Command("git", a...)
			cmd.Dir = ts.MkAbs(".")
			cmd.Env = append(environ(ts), "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
			if out, err := cmd.CombinedOutput(); err != nil {
				ts.Fatalf("git %s: %v\n%s", strings.Join(a, " "), err, out)
			}
		}
	}
}

func environ(ts *testscript.TestScript) []string {
	var env []string
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_AUTHOR_NAME",
		"GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "PATH", "TZ"} {
		env = append(env, k+"="+ts.Getenv(k))
	}
	return env
}

// cmdDaemon serves the repositories under DIR with git daemon on a free
// port of 127.0.0.1, pushes allowed, until the script ends: `daemon DIR`.
// It sets $DAEMON to the URL of DIR (git://127.0.0.1:<port>).
func cmdDaemon(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: daemon DIR")
	}
	dir := ts.MkAbs(args[0])
	for try := 0; try < 5; try++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			ts.Fatalf("daemon: %v", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		// --verbose: it says "Ready to rumble" once it listens, which is
		// what is waited for (no clock); it exits when the port is taken.
		cmd := exec.Command("git", "daemon", "--verbose", "--reuseaddr", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port),
			"--base-path="+dir, "--export-all", "--enable=receive-pack", "--informative-errors", dir)
		cmd.Env = environ(ts)
		groupOf(cmd) // its children are stopped with it
		pipe, err := cmd.StderrPipe()
		if err != nil {
			ts.Fatalf("daemon: %v", err)
		}
		if err := cmd.Start(); err != nil {
			ts.Fatalf("daemon: %v", err)
		}
		// What it says is read to its end (it logs each connection);
		// ready is closed when it listens, said when its stderr ends.
		var stderr strings.Builder
		ready, said := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(said)
			sc := bufio.NewScanner(pipe)
			listening := false
			for sc.Scan() {
				if !listening {
					stderr.WriteString(sc.Text() + "\n")
					if strings.HasSuffix(sc.Text(), "] Ready to rumble") {
						listening = true
						close(ready)
					}
				}
			}
		}()
		stop := func() {
			stopGroup(cmd.Process.Pid)
			<-said
			cmd.Wait()
		}
		select {
		case <-ready:
			ts.Defer(stop)
			ts.Setenv("DAEMON", fmt.Sprintf("git://127.0.0.1:%d", port))
			return
		case <-said: // it exited before it listened: try another port
			cmd.Wait()
		}
		ts.Logf("daemon: git daemon on port %d exited: %s", port, stderr.String())
	}
	ts.Fatalf("daemon: git daemon would not start")
}
