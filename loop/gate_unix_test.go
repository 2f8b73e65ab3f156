//go:build unix

package loop

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
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
