//go:build unix

package loop

import (
	"os/exec"
	"syscall"
)

// ownGroup puts a command in a process group of its own (its leader's
// number), so that everything it starts can be signalled with it.
func ownGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// termGroup asks the process group to end (SIGTERM).
func termGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }

// killGroup ends the process group (SIGKILL).
func killGroup(pgid int) error { return syscall.Kill(-pgid, syscall.SIGKILL) }

// groupAlive reports whether the process group has a process still.
func groupAlive(pgid int) bool { return pgid > 0 && syscall.Kill(-pgid, 0) == nil }
