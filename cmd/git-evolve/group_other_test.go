//go:build !unix

package main

import (
	"os"
	"os/exec"
)

// groupOf does nothing here: stopGroup ends the process alone.
func groupOf(*exec.Cmd) {}

// stopGroup ends the process pid.
func stopGroup(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
