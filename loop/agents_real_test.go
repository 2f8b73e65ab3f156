package loop

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
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
// the key, never on a flag. A CLI is stopped once it shows it took its
// arguments: Codex prints its banner; Claude Code, which says nothing,
// asks the API, here a server of the test's own (ANTHROPIC_BASE_URL) that
// answers that the key is no key. No clock is read: a CLI that refuses a
// flag exits.
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
			// the API the CLI asks: its first request says it started
			asked := make(chan struct{})
			var once sync.Once
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				once.Do(func() { close(asked) })
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusUnauthorized)
				io.WriteString(w, `{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
			}))
			defer api.Close()
			cmd.Env = append(os.Environ(), "HOME="+home, "CODEX_HOME="+filepath.Join(home, ".codex"), "EVOLVE_BRIEF="+brief,
				"OPENAI_API_KEY=sk-no-key", "ANTHROPIC_API_KEY=sk-ant-no-key", "ANTHROPIC_BASE_URL="+api.URL, "NO_COLOR=1")
			ownGroup(cmd)
			out := &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			// waited for until it shows it started, however loaded the
			// machine (its output is looked at every 100 ms)
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
				case <-asked:
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
