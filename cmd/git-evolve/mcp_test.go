package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-evolve/git-evolve/internal/mcpserver"
)

// inProcess runs git evolve commands in this process, in dir, one at a
// time: the server's runner without a process per call, for the tests.
func inProcess(dir string, getenv func(string) string) mcpserver.Runner {
	var mu sync.Mutex
	return func(ctx context.Context, args []string) ([]byte, []byte, int) {
		mu.Lock()
		defer mu.Unlock()
		var stdout, stderr bytes.Buffer
		code := runContext(ctx, append([]string{"-C", dir, "--color=never"}, args...), strings.NewReader(""), &stdout, &stderr, getenv)
		return stdout.Bytes(), stderr.Bytes(), code
	}
}

// TestMCPServer drives the MCP server as a client would, over a pipe, its
// tools running git evolve in this process: the tools it lists (never
// stop, kill, resume or trust), a whole cycle through them, a refused
// input, the ledger and a cycle as resources.
func TestMCPServer(t *testing.T) {
	dir := t.TempDir()
	home := t.TempDir()
	env := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, ".config"), "GIT_CONFIG_NOSYSTEM": "1",
		"GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "C", "GIT_COMMITTER_EMAIL": "c@example.com",
		"PATH": os.Getenv("PATH"), "LANG": "C"}
	getenv := func(k string) string { return env[k] }
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	goalsYAML := "version: 3\ngoals:\n  - id: feature\n    description: the feature exists\n    check: test -e feature.txt\n    weight: 3\n"
	if err := os.WriteFile(filepath.Join(dir, "GOALS.yaml"), []byte(goalsYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "GOALS.yaml")
	git("commit", "-q", "-m", "add goals")
	runner := inProcess(dir, getenv)
	if _, stderr, code := runner(context.Background(), []string{"init", "-q"}); code != 0 {
		t.Fatalf("init: %s", stderr)
	}

	// The server on one end of two pipes, the client on the other.
	serverIn, clientOut := io.Pipe()
	clientIn, serverOut := io.Pipe()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.New(runner, "test").Run(ctx, &mcp.IOTransport{Reader: serverIn, Writer: serverOut})
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.IOTransport{Reader: clientIn, Writer: clientOut}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()

	tools, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	want := []string{"status", "next", "cycle_start", "cycle_status", "cycle_finish", "cycle_abort", "goals_measure", "log", "show", "hypothesis_add", "hypothesis_verdict", "queue_list"}
	slices.Sort(names)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}
	t.Logf("tools: %s", strings.Join(names, " "))

	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}
	ok := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res := call(name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text(res))
		}
		return res
	}

	st := ok("status", nil)
	if m, _ := st.StructuredContent.(map[string]any); m == nil || m["open_cycle"] != nil {
		t.Fatalf("status: %v", st.StructuredContent)
	}
	if res := ok("goals_measure", nil); !strings.Contains(text(res), `"goal_id":"feature","result":"fail"`) {
		t.Errorf("goals_measure: %s", text(res))
	}
	if res := ok("next", nil); !strings.Contains(text(res), `"rung":"goal","target":"feature"`) {
		t.Errorf("next: %s", text(res))
	}
	ok("cycle_start", map[string]any{"target": "feature"})
	if err := os.WriteFile(filepath.Join(dir, "feature.txt"), []byte("done\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := ok("cycle_status", nil); !strings.Contains(text(res), `"substantive":["feature.txt"]`) {
		t.Errorf("cycle_status: %s", text(res))
	}
	if res := ok("cycle_finish", map[string]any{"message": "- feature: it exists, a message that starts with a dash"}); !strings.Contains(text(res), `"result":"improved"`) {
		t.Fatalf("cycle_finish: %s", text(res))
	}
	if res := ok("log", map[string]any{"limit": 1}); !strings.Contains(text(res), `"cycle":1,"target":"feature","result":"improved"`) {
		t.Errorf("log: %s", text(res))
	}
	if res := ok("show", map[string]any{"cycle": "1"}); !strings.Contains(text(res), `"result":"improved"`) {
		t.Errorf("show: %s", text(res))
	}
	ok("hypothesis_add", map[string]any{"id": "h1", "cycle_landed": 1, "check_at_cycle": 3, "hypothesis": "faster", "measure": "bench"})
	ok("hypothesis_verdict", map[string]any{"id": "h1", "verdict": "VERIFIED", "evidence": "2x"})
	if res := ok("queue_list", nil); !strings.Contains(text(res), `"items":[]`) {
		t.Errorf("queue_list: %s", text(res))
	}
	// A command that refuses is a tool error with its words; an input that
	// is wrong never reaches a command.
	if res := call("cycle_abort", nil); !res.IsError || !strings.Contains(text(res), "no cycle is open") {
		t.Errorf("cycle_abort with no cycle open: %v %s", res.IsError, text(res))
	}
	if res := call("show", map[string]any{}); !res.IsError {
		t.Errorf("show without a cycle: %s", text(res))
	}
	if _, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "stop"}); err == nil {
		t.Error("a stop tool answered")
	}

	ledger, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evolve://ledger"})
	if err != nil || len(ledger.Contents) != 1 || !strings.Contains(ledger.Contents[0].Text, `"result":"improved"`) {
		t.Fatalf("the ledger resource: %v %+v", err, ledger)
	}
	one, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evolve://cycle/1"})
	if err != nil || !json.Valid([]byte(strings.SplitN(one.Contents[0].Text, "\n", 2)[0])) {
		t.Fatalf("the cycle resource: %v %+v", err, one)
	}
	if _, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evolve://cycle/99"}); err == nil {
		t.Error("a cycle that is not there was read")
	}
	session.Close()
	cancel()
	<-done
}
