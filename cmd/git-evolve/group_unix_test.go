//go:build unix

package main

import (
	"os/exec"
	"syscall"
)

// groupOf puts cmd in a process group of its own, stopped whole by
// stopGroup.
func groupOf(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopGroup asks the process group pgid to end.
func stopGroup(pgid int) { _ = syscall.Kill(-pgid, syscall.SIGTERM) }
