package loop

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// flagRefused is what the agent CLIs say of an argument they do not take:
// clap's (Codex), commander's (Claude Code).
var flagRefused = regexp.MustCompile(`(?i)unexpected argument|unknown option|unrecognized (option|argument)|invalid value .* for '--`)

// The presets' lines, run through the real agent CLIs where they are
// installed (CI installs Claude Code and Codex from npm), with a key that
// is no key: each must get past its arguments, to fail on the network or
// the key, never on a flag. A CLI that says it started (Codex prints its
// banner) is stopped there; one that says nothing is stopped after a few
// seconds, long after a refused flag would have been said.
func TestPresetsRunInTheRealCLIs(t *testing.T) {
	clis := map[string]struct {
		bin     string
		started string // what it prints once its arguments are taken
	}{
		"codex":  {"codex", "OpenAI Codex v"},
		"claude": {"claude", ""},
	}
	for name, cli := range clis {
		t.Run(name, func(t *testing.T) {
			if _, err := exec.LookPath(cli.bin); err != nil {
				t.Skipf("%s is not installed (npm install -g %s)", cli.bin, map[string]string{"codex": "@openai/codex", "claude": "@anthropic-ai/claude-code"}[name])
			}
			t.Parallel()
			dir := t.TempDir()
			home := filepath.Join(dir, "home")
			if err := os.MkdirAll(home, 0o755); err != nil {
				t.Fatal(err)
			}
			brief := filepath.Join(dir, "brief.md")
			if err := os.WriteFile(brief, []byte("# Evolve cycle 1: nothing to do\n\nChange nothing.\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("sh", "-c", AgentPresets[name])
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "EVOLVE_BRIEF="+brief,
				"OPENAI_API_KEY=sk-no-key", "ANTHROPIC_API_KEY=sk-ant-no-key", "NO_COLOR=1")
			ownGroup(cmd)
			out := &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// A CLI that says it started is waited for until it does,
			// however loaded the machine; only one that says nothing is
			// given a time.
			var deadline <-chan time.Time
			if cli.started == "" {
				deadline = time.After(8 * time.Second)
			}
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
		wait:
			for {
				select {
				case err := <-exited:
					if flagRefused.MatchString(out.String()) {
						t.Fatalf("%s refused the preset's arguments (%v):\n%s", name, err, out.String())
					}
					return // it ran, and failed on what a real key would give it
				case <-tick.C:
					if cli.started != "" && strings.Contains(out.String(), cli.started) {
						break wait
					}
				case <-deadline:
					break wait
				}
			}
			_ = killGroup(cmd.Process.Pid)
			<-exited
			if flagRefused.MatchString(out.String()) {
				t.Fatalf("%s refused the preset's arguments:\n%s", name, out.String())
			}
		})
	}
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
