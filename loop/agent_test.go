//go:build unix

package loop

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

func TestAgentAlive(t *testing.T) {
	if procStarted(os.Getpid()) == "" {
		t.Skip("no /proc here")
	}
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	r := &RunState{AgentGroup: pid, AgentStarted: procStarted(pid)}
	if !agentAlive(r) {
		t.Fatal("a live agent group is not seen alive")
	}
	if r2 := (&RunState{AgentGroup: pid, AgentStarted: "1"}); agentAlive(r2) {
		t.Error("a process that took the agent's number (another start time) is taken for the agent")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if agentAlive(r) {
		t.Error("an agent that ended is seen alive")
	}
	if agentAlive(&RunState{}) {
		t.Error("no agent is seen alive")
	}
}
