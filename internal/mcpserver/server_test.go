package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-evolve/git-evolve/internal/mcptools"
)

// fake answers command lines from a table and remembers what ran.
type fake struct {
	mu      sync.Mutex
	ran     [][]string
	answers map[string]answer // by the command line's first words joined
}

type answer struct {
	stdout, stderr string
	code           int
}

func (f *fake) run(_ context.Context, args []string) ([]byte, []byte, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ran = append(f.ran, args)
	for n := len(args); n > 0; n-- {
		if a, ok := f.answers[strings.Join(args[:n], " ")]; ok {
			return []byte(a.stdout), []byte(a.stderr), a.code
		}
	}
	return nil, []byte("no answer for " + strings.Join(args, " ")), 1
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.ran)
}

func connect(t *testing.T, f *fake) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := New(f.run, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text + "\n")
		}
	}
	return b.String()
}

// TestToolsList: every tool is listed with its hints, an input schema that
// admits no other property, and an output schema.
func TestToolsList(t *testing.T) {
	cs := connect(t, &fake{})
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != len(mcptools.Tools) {
		t.Fatalf("%d tools listed, %d defined", len(res.Tools), len(mcptools.Tools))
	}
	for _, tool := range res.Tools {
		i := slices.IndexFunc(mcptools.Tools, func(t mcptools.Tool) bool { return t.Name == tool.Name })
		if i < 0 {
			t.Errorf("tool %s is not defined", tool.Name)
			continue
		}
		want := mcptools.Tools[i]
		a := tool.Annotations
		if a == nil || a.ReadOnlyHint != want.ReadOnly || (a.DestructiveHint == nil) != want.ReadOnly || a.DestructiveHint != nil && *a.DestructiveHint != want.Destructive ||
			a.IdempotentHint != want.Idempotent || a.OpenWorldHint == nil || *a.OpenWorldHint || a.Title == "" {
			t.Errorf("%s: annotations %+v, want %+v", tool.Name, a, want)
		}
		in, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type                 string          `json:"type"`
			AdditionalProperties json.RawMessage `json:"additionalProperties"`
		}
		if err := json.Unmarshal(in, &schema); err != nil || schema.Type != "object" || string(schema.AdditionalProperties) != "false" {
			t.Errorf("%s: input schema %s: not an object that admits no other property", tool.Name, in)
		}
		out, _ := json.Marshal(tool.OutputSchema)
		var outSchema struct {
			Type     string   `json:"type"`
			Required []string `json:"required"`
		}
		if err := json.Unmarshal(out, &outSchema); err != nil || outSchema.Type != "object" || len(outSchema.Required) == 0 {
			t.Errorf("%s: output schema %s", tool.Name, out)
		}
	}
	for name := range adders {
		if !slices.ContainsFunc(mcptools.Tools, func(t mcptools.Tool) bool { return t.Name == name }) {
			t.Errorf("an adder for %s, which is no tool", name)
		}
	}
}

// TestInputRefused: an input its schema refuses is a tool error, and no
// command runs.
func TestInputRefused(t *testing.T) {
	f := &fake{}
	cs := connect(t, f)
	for _, c := range []struct {
		tool string
		args map[string]any
		says string
	}{
		{"show", map[string]any{}, "cycle"},
		{"show", map[string]any{"cycle": 3}, "cycle"},
		{"show", map[string]any{"cycle": " "}, "a cycle number or a commit is needed"},
		{"log", map[string]any{"limit": "ten"}, "limit"},
		{"log", map[string]any{"limit": 1.5}, "limit"},
		{"log", map[string]any{"limit": -1}, "limit"},
		{"log", map[string]any{"bogus": true}, "bogus"},
		{"status", map[string]any{"verbose": true}, "verbose"},
		{"next", map[string]any{"strategy": "yolo"}, "strategy"},
		{"hypothesis_verdict", map[string]any{"id": "h", "verdict": "MAYBE", "evidence": "e"}, "verdict"},
		{"hypothesis_add", map[string]any{"id": "h"}, "cycle_landed"},
		{"goals_measure", map[string]any{"goal": "one"}, "goal"},
		{"goals_measure", map[string]any{"goal": []any{""}}, "empty"},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Errorf("%s %v: %v", c.tool, c.args, err)
			continue
		}
		if !res.IsError || !strings.Contains(text(res), c.says) {
			t.Errorf("%s %v: error %v, %q; want an error naming %q", c.tool, c.args, res.IsError, text(res), c.says)
		}
	}
	if n := f.count(); n != 0 {
		t.Errorf("%d commands ran for inputs the schema refuses: %v", n, f.ran)
	}
}

// TestResults: what each tool returns, from what its command printed.
func TestResults(t *testing.T) {
	record := `{"v":1,"cycle":%d,"result":"improved"}`
	f := &fake{answers: map[string]answer{
		"log --json":                {stdout: strings.Join([]string{fmt.Sprintf(record, 1), fmt.Sprintf(record, 2), ""}, "\n")},
		"log --json -n 1":           {stdout: ""},
		"status --json":             {stdout: `{"open_cycle":null,"halt":{},"last_cycles":[],"failing_goals":[],"ledger":{}}`, stderr: "git-evolve: notice: the remote's ledger was refused"},
		"cycle finish --json":       {stdout: `{"cycle":4,"id":"x","result":"regressed","commit":"abc","record":{}}`, code: 3},
		"cycle abort --json":        {stderr: "git-evolve: error: no cycle is open in this worktree: nothing to abort", code: 10},
		"queue list --json":         {stdout: `not json`},
		"cycle status --json":       {stdout: `{"cycle":1}`},
		"show --json -- 7":          {stdout: `{"commit":"a","record":{"cycle":7}}` + "\n" + `{"commit":"b","record":{"cycle":7}}` + "\n"},
		"hypothesis add --json":     {stdout: `{"id":"h","status":"PENDING"}`},
		"hypothesis verdict --json": {stdout: `{"id":"h","status":"VERIFIED"}`},
	}}
	cs := connect(t, f)
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	structured := func(res *mcp.CallToolResult) string {
		b, _ := json.Marshal(res.StructuredContent)
		return string(b)
	}

	if res := call("log", nil); res.IsError || structured(res) != `{"cycles":[{"cycle":1,"result":"improved","v":1},{"cycle":2,"result":"improved","v":1}]}` {
		t.Errorf("log: %v %s", res.IsError, structured(res))
	}
	if res := call("log", map[string]any{"limit": 1}); res.IsError || structured(res) != `{"cycles":[]}` {
		t.Errorf("log of an empty ledger: %v %s", res.IsError, structured(res))
	}
	if res := call("show", map[string]any{"cycle": "7"}); res.IsError || !strings.HasPrefix(structured(res), `{"records":[{"commit":"a"`) {
		t.Errorf("show: %v %s", res.IsError, structured(res))
	}
	if res := call("status", nil); res.IsError || !strings.Contains(text(res), "notice: the remote's ledger was refused") {
		t.Errorf("status: the command's notice is not in the result: %s", text(res))
	}
	if res := call("cycle_finish", nil); res.IsError || !strings.Contains(structured(res), `"result":"regressed"`) || !strings.Contains(text(res), "exited 3") {
		t.Errorf("a regressed cycle: %v %s %s", res.IsError, structured(res), text(res))
	}
	if res := call("cycle_abort", nil); !res.IsError || !strings.Contains(text(res), "no cycle is open") || !strings.Contains(text(res), "exited 10") || res.StructuredContent != nil {
		t.Errorf("a refused abort: %v %s", res.IsError, text(res))
	}
	if res := call("queue_list", nil); !res.IsError {
		t.Errorf("output that is no JSON: %v %s", res.IsError, text(res))
	}
	// An object that lacks what the output schema requires is not passed on.
	if res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "cycle_status"}); err == nil && !res.IsError {
		t.Errorf("cycle_status without open: %s", structured(res))
	}
	if res := call("hypothesis_add", map[string]any{"id": "h", "cycle_landed": 1, "check_at_cycle": 3, "hypothesis": "faster", "measure": "bench"}); res.IsError {
		t.Errorf("hypothesis_add: %s", text(res))
	}
	if res := call("hypothesis_verdict", map[string]any{"id": "h", "verdict": "VERIFIED", "evidence": "2x"}); res.IsError {
		t.Errorf("hypothesis_verdict: %s", text(res))
	}
	want := [][]string{
		{"hypothesis", "add", "--json", "--id=h", "--cycle-landed=1", "--check-at-cycle=3", "--hypothesis=faster", "--measure=bench"},
		{"hypothesis", "verdict", "--json", "--evidence=2x", "--", "h", "VERIFIED"},
	}
	if got := f.ran[len(f.ran)-2:]; !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("ran %q, want %q", got, want)
	}
}

// TestResources: the ledger, a cycle, and URIs that name nothing.
func TestResources(t *testing.T) {
	f := &fake{answers: map[string]answer{
		"export":           {stdout: `{"cycle":1}` + "\n"},
		"show --json -- 1": {stdout: `{"commit":"a"}` + "\n"},
		"show --json -- 2": {stderr: "no cycle 2", code: 10},
	}}
	cs := connect(t, f)
	ctx := context.Background()
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evolve://ledger"}); err != nil || r.Contents[0].Text != `{"cycle":1}`+"\n" || r.Contents[0].MIMEType != "application/jsonl" {
		t.Errorf("ledger: %v %+v", err, r)
	}
	if r, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "evolve://cycle/1"}); err != nil || !strings.Contains(r.Contents[0].Text, `"commit":"a"`) {
		t.Errorf("cycle 1: %v %+v", err, r)
	}
	for _, uri := range []string{"evolve://cycle/2", "evolve://cycle/x", "evolve://cycle/01", "evolve://other"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err == nil {
			t.Errorf("%s was read", uri)
		}
	}
	templates, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate != mcptools.CycleTemplate {
		t.Errorf("templates: %v %+v", err, templates)
	}
}

// FuzzParse: whatever a command prints, parse gives an error or JSON of
// the shape the tool declares.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, "{\"a\":1}\n{\"b\":2}\n", "", "[1]", "{", "null", `{"a":1} {"b":2}`, "\n\n{}\n"} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, out []byte, list bool) {
		tool := mcptools.Tool{Name: "t"}
		if list {
			tool.List = "items"
		}
		js, err := parse(tool, out)
		if err != nil {
			return
		}
		var v map[string]any
		if err := json.Unmarshal(js, &v); err != nil {
			t.Fatalf("parse(%q) = %s: %v", out, js, err)
		}
		if list {
			if _, ok := v["items"].([]any); !ok || len(v) != 1 {
				t.Fatalf("parse(%q) = %s: not a list", out, js)
			}
		}
	})
}

// The output schemas parse, and each admits an example of its command's
// output.
func TestOutputSchemas(t *testing.T) {
	for _, tool := range mcptools.Tools {
		var s jsonschema.Schema
		if err := json.Unmarshal([]byte(tool.Output), &s); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		if _, err := s.Resolve(nil); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
		}
	}
}
