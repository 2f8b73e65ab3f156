//go:build unix

package loop

import (
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
