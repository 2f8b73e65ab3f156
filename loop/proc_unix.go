//go:build unix

package loop

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// ownGroup puts a command in a session and a process group of its own
// (both its leader's number), so that everything it starts can be
// signalled with it, and a process it starts can be told from the
// operator's by its session (see AgentInside).
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }

// ownProcess is this process's group and session.
func ownProcess() (p struct{ group, session int }) {
	p.group = unix.Getpgrp()
	p.session, _ = unix.Getsid(0)
	return p
}

// termGroup asks the process group to end (SIGTERM).
func termGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

// killGroup ends the process group (SIGKILL).
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether the process group has a process still.
func groupAlive(pgid int) bool { return pgid > 0 && syscall.Kill(-pgid, 0) == nil }

// gateStart has cmd, a shell command (sh -c <script>), wait once started
// until open is called, and only then run its script: the driver writes
// down the agent's process group before the agent runs, so that neither a
// driver killed at that moment leaves an agent no one knows of, nor can
// an agent act before its driver wrote its state. The wait is a read of a
// pipe the child holds as fd 3 (closed before the script runs); a driver
// gone before open closes the pipe, and the child exits without running
// the script. The line is read in a subshell: a name read into is
// changed in the environment the script gets when it was there (`_`, which
// an interactive shell exports to what it starts). started is called once
// cmd started: the child has its end. open(false) lets go of the child
// without running it.
func gateStart(cmd *exec.Cmd) (started func(), open func(run bool), err error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	script := cmd.Args[len(cmd.Args)-1]
	// the script's shell is the one that waits (cmd.Path, found on the
	// driver's PATH), not one found on the PATH the agent's environment
	// names; named "sh", as sh -c <script> names it
	cmd.Args = []string{"sh", "-c", `(read -r _) <&3 || exit 1; exec 3<&-; exec "$2" -c "$1" sh`, "sh", script, cmd.Path}
	cmd.ExtraFiles = append(cmd.ExtraFiles, r)
	started = func() { r.Close() }
	open = func(run bool) {
		if run {
			_, _ = w.Write([]byte("\n"))
		}
		w.Close()
	}
	return started, open, nil
}
