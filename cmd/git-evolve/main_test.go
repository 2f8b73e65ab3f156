package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"git-evolve": func() { os.Exit(Main()) },
	})
}

// TestScripts runs the testscript suites in testscripts/<area>/. Set
// UPDATE_SCRIPTS=1 to rewrite the golden files inside the archives.
func TestScripts(t *testing.T) {
	dirs, err := filepath.Glob("../../testscripts/*")
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range dirs {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			t.Parallel()
			testscript.Run(t, scriptParams(dir))
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
		},
	}
}

// scriptCondition answers the conditions the suites use beyond the built-in
// ones: [pty] is true when a pseudo-terminal can be opened (ttyin needs one).
func scriptCondition(cond string) (bool, error) {
	switch cond {
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
// config, a fixed identity and fixed dates (so object names are golden).
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
	gitconfig := "[init]\n\tdefaultBranch = main\n[user]\n\tname = Ada Author\n\temail = ada@example.com\n"
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
