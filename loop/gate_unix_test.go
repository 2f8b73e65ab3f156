//go:build unix

package loop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// An agent held by gateStart runs its script once open(true) says so, and
// never when the driver lets go of it (open(false), as when its run state
// could not be written) or is gone (the pipe closed unwritten): the
// child's read of its gate then ends without a line.
func TestGateStartHoldsTheScript(t *testing.T) {
	dir := t.TempDir()
	for _, run := range []bool{true, false} {
		mark := filepath.Join(dir, "ran")
		os.Remove(mark)
		cmd := exec.Command("sh", "-c", `touch "$MARK"; test ! -e /proc/self/fd/3`)
		cmd.Env = append(os.Environ(), "MARK="+mark)
		started, open, err := gateStart(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started()
		open(run)
		err = cmd.Wait()
		_, serr := os.Stat(mark)
		switch {
		case run && (err != nil || serr != nil):
			t.Errorf("opened: the script ran %v, exit %v (fd 3 left open to it when the exit is 1)", serr == nil, err)
		case !run && serr == nil:
			t.Error("let go of: the script ran")
		case !run:
			var xe *exec.ExitError
			if !errors.As(err, &xe) || xe.ExitCode() != 1 {
				t.Errorf("let go of: exit %v, want 1", err)
			}
		}
	}
}

// The script held by gateStart sees what sh -c <script> gave it: its $0
// and arguments, and its environment as it was, whatever its names (the
// gate reads its line into none of them: `_` is in the environment of
// whatever an interactive shell starts).
func TestGateKeepsTheScriptsView(t *testing.T) {
	script := `printf '%s|%s\n' "$0" "$#"; env | LC_ALL=C sort`
	env := append(os.Environ(), "_=/usr/bin/git", "REPLY=kept", "line=kept")
	run := func(gated bool) string {
		cmd := exec.Command("sh", "-c", script)
		cmd.Env = env
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		started, open := func() {}, func(bool) {}
		if gated {
			var err error
			if started, open, err = gateStart(cmd); err != nil {
				t.Fatal(err)
			}
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started()
		open(true)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("gated %v: %v: %s", gated, err, out.String())
		}
		return out.String()
	}
	plain, gated := strings.Split(run(false), "\n"), strings.Split(run(true), "\n")
	if len(plain) != len(gated) {
		t.Fatalf("the script's view: %d lines under sh -c, %d held by the gate", len(plain), len(gated))
	}
	for i := range plain {
		if plain[i] != gated[i] {
			t.Errorf("the script's view: %q under sh -c, %q held by the gate", plain[i], gated[i])
		}
	}
}

// The script's shell is the one the gate waits in (found on the driver's
// PATH), not an sh the PATH of the agent's environment leads to.
func TestGateShellNotFromTheAgentsPath(t *testing.T) {
	dir := t.TempDir()
	planted := filepath.Join(dir, "planted")
	fake := "#!/bin/sh\necho planted > " + planted + "\nexit 7\n"
	if err := os.WriteFile(filepath.Join(dir, "sh"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "echo ran")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	started, open, err := gateStart(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started()
	open(true)
	if err := cmd.Wait(); err != nil || out.String() != "ran\n" {
		t.Fatalf("the script: %v, %q", err, out.String())
	}
	if _, err := os.Stat(planted); err == nil {
		t.Fatal("the script ran in the sh the agent's PATH leads to")
	}
}
