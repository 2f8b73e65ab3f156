//go:build unix

package loop

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestAgentInside(t *testing.T) {
	if procStarted(os.Getpid()) == "" {
		t.Skip("no /proc here")
	}
	common := t.TempDir()
	wt := filepath.Join(common, "worktrees", "side")
	// An agent in a session of its own: this process is outside it.
	cmd := exec.Command("sleep", "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	if err := (&RunState{ID: "other", AgentGroup: pid, AgentStarted: procStarted(pid)}).save(common); err != nil {
		t.Fatal(err)
	}
	if id, _, _, ok := AgentInside(common); ok {
		t.Fatalf("the operator's process is taken for the agent of %s", id)
	}
	// This process's own group, in another worktree's run: inside.
	g := syscall.Getpgrp()
	if err := (&RunState{ID: "mine", AgentGroup: g, AgentStarted: procStarted(g)}).save(wt); err != nil {
		t.Fatal(err)
	}
	if id, group, dir, ok := AgentInside(common); !ok || id != "mine" || group != g || dir != wt {
		t.Fatalf("inside the agent's group: %q %d %q %v", id, group, dir, ok)
	}
	// The process tree: this process descends from its parent.
	if !descendsFrom(os.Getpid(), os.Getppid()) || descendsFrom(os.Getpid(), pid) {
		t.Error("descendsFrom misreads the process tree")
	}
}

func TestMarkerWatch(t *testing.T) {
	top := t.TempDir()
	m := Markers{Top: top, ConfigDir: filepath.Join(top, "config")}
	stop := m.Path(Stop)
	if _, err := m.Write(Stop, "the operator's", 3, "op", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	resumed := false
	w := watchMarkers(m, func() bool { return resumed }, time.Hour)
	// The agent removes the operator's STOP and writes a KILL.
	if err := os.Remove(stop); err != nil {
		t.Fatal(err)
	}
	w.poll()
	if err := os.MkdirAll(filepath.Dir(m.Path(Kill)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.Path(Kill), []byte("reason: \x1b[31mme\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	notes, removed := w.end(top)
	if !removed || len(notes) != 2 {
		t.Fatalf("notes %q, removed %v", notes, removed)
	}
	if !strings.Contains(notes[0], "KILL appeared during the agent's turn (it says: reason [31mme)") ||
		notes[1] != "the agent removed .agents/evolve/STOP during its turn: the driver put it back, and the run halts" {
		t.Errorf("notes %q", notes)
	}
	data, err := os.ReadFile(stop)
	if err != nil || !strings.Contains(string(data), "reason: the operator's") {
		t.Fatalf("STOP is not back as it was: %q %v", data, err)
	}
	if fi, _ := os.Stat(stop); !fi.ModTime().Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Errorf("STOP's time is %v, not the operator's", fi.ModTime())
	} else if fi.Mode().Perm() != 0o644 {
		t.Errorf("STOP put back with mode %v, not a marker's", fi.Mode().Perm())
	}
	// Lifted by the operator's resume: not put back.
	w = watchMarkers(m, func() bool { return resumed }, time.Hour)
	resumed = true
	os.Remove(stop)
	if notes, removed := w.end(top); removed || len(notes) != 1 ||
		notes[0] != ".agents/evolve/STOP was removed during the agent's turn after a resume was signalled (the resume stamp touched, or a resume recorded): not put back" {
		t.Errorf("after a resume: %q %v", notes, removed)
	}
	if _, err := os.Stat(stop); err == nil {
		t.Error("a STOP the operator lifted was put back")
	}
}
