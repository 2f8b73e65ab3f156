//go:build !unix

package loop

import (
	"os"
	"os/exec"
)

// Without process groups, the command's own process stands for its group:
// what it started is not reached.

func ownGroup(*exec.Cmd) {}

// ownProcess has no group or session to tell here.
func ownProcess() (p struct{ group, session int }) { return p }

func termGroup(pid int) { _ = killGroup(pid) }

func killGroup(pid int) error {
	p, err := os.FindProcess(pid)
	if err != nil {
		return err
	}
	return p.Kill()
}

// groupAlive cannot be told here: a run killed outright is taken to have
// taken its agent with it.
func groupAlive(int) bool { return false }

// gateStart does not hold the command here: it runs as it starts.
func gateStart(*exec.Cmd) (started func(), open func(run bool), err error) {
	return func() {}, func(bool) {}, nil
}
