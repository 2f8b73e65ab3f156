package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestSet(t *testing.T) {
	for _, k := range []string{"HOME", "XDG_CONFIG_HOME", "GIT_CONFIG_NOSYSTEM", "GIT_DIR", "GOCACHE", "GOPATH"} {
		t.Setenv(k, os.Getenv(k)) // restored after the test
	}
	t.Setenv("GIT_DIR", "/elsewhere")
	home := t.TempDir()
	if err := Set(home); err != nil {
		t.Fatal(err)
	}
	if os.Getenv("GIT_DIR") != "" {
		t.Error("GIT_DIR from outside is still set")
	}
	// A repository made and committed to with no identity of the user's.
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "x"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %s: %v\n%s", args[0], err, out)
		}
	}
	cmd := exec.Command("git", "config", "--show-origin", "--list")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	global := "file:" + filepath.Join(home, ".gitconfig") + "\t"
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if strings.HasPrefix(line, global) {
			if k := strings.TrimPrefix(line, global); k != "maintenance.auto=false" && k != "gc.auto=0" {
				t.Errorf("global config beyond automatic maintenance: %s", k)
			}
			continue
		}
		if !strings.HasPrefix(line, "file:.git/config") && !strings.HasPrefix(line, "command line:") {
			t.Errorf("config from outside the repository: %s", line)
		}
	}
	if got := filepath.Clean(os.Getenv("HOME")); got != filepath.Clean(home) {
		t.Errorf("HOME %s, want %s", got, home)
	}
}
