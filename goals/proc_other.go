//go:build !unix

package goals

import "os/exec"

func ownGroup(*exec.Cmd) {}

func killGroup(cmd *exec.Cmd) { cmd.Process.Kill() }

// readFlags open a value file (see proc_unix.go).
const readFlags = 0
