// Package mcpserver serves git-evolve's tools and resources
// (internal/mcptools) over the Model Context Protocol with the protocol's
// Go SDK: each tool's input is checked against its schema before any
// command runs, each result is structured content that matches the tool's
// output schema (a list is a list), a command that fails is a tool error
// with its words, and the tools carry their read-only, destructive and
// idempotent hints. It is the program git-evolve-mcp (Main), which git
// evolve mcp runs: linked into git-evolve itself, the SDK and what it
// imports would cost every command's start, not only this one's.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-evolve/git-evolve/internal/mcptools"
)

// Runner runs one git evolve command line in the repository and gives back
// its output and exit code.
type Runner func(ctx context.Context, args []string) (stdout, stderr []byte, code int)

// Instructions are what the server tells a client of itself.
const Instructions = "git-evolve's evolve loop: measure the goals, take the next work, open a cycle, change the working tree, finish the cycle (the gate judges it). Every tool runs the git evolve command of the same name and returns its JSON."

// exitRecoverable is git evolve's exit code for a command that did its job
// and ended with a recoverable failure: a cycle that regressed and was
// reverted. Its JSON is the tool's result, not an error.
const exitRecoverable = 3

// exitUsage is git evolve's exit code for input that names nothing (show
// of a cycle the ledger does not hold).
const exitUsage = 10

// New is the server of the tools and resources, running their commands
// with run.
func New(run Runner, version string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "git-evolve", Title: "git-evolve", Version: version},
		&mcp.ServerOptions{Instructions: Instructions})
	for _, t := range mcptools.Tools {
		adders[t.Name](s, t, run)
	}
	s.AddResource(&mcp.Resource{URI: mcptools.LedgerURI, Name: "ledger", MIMEType: "application/jsonl",
		Description: "Every record of the ledger, one canonical JSON line each (git evolve export)."}, resource(run))
	s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: mcptools.CycleTemplate, Name: "cycle", MIMEType: "application/jsonl",
		Description: "The record of cycle n, on each commit that holds it (git evolve show --json n)."}, resource(run))
	return s
}

// adders register each tool with its input type.
var adders = map[string]func(*mcp.Server, mcptools.Tool, Runner){
	"status":             add[mcptools.None],
	"next":               add[mcptools.NextIn],
	"cycle_start":        add[mcptools.CycleStartIn],
	"cycle_status":       add[mcptools.None],
	"cycle_finish":       add[mcptools.CycleFinishIn],
	"cycle_abort":        add[mcptools.CycleAbortIn],
	"goals_measure":      add[mcptools.GoalsMeasureIn],
	"log":                add[mcptools.LogIn],
	"show":               add[mcptools.ShowIn],
	"hypothesis_add":     add[mcptools.HypothesisAddIn],
	"hypothesis_verdict": add[mcptools.HypothesisVerdictIn],
	"queue_list":         add[mcptools.QueueListIn],
}

// fixed are the command lines of the tools whose input is None.
var fixed = map[string]mcptools.Input{
	"status":       mcptools.StatusArgs,
	"cycle_status": mcptools.CycleStatusArgs,
}

// add registers tool t, whose input is an In.
func add[In any](s *mcp.Server, t mcptools.Tool, run Runner) {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
	}
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	for prop, values := range t.Enum {
		p := in.Properties[prop]
		if p == nil {
			panic(fmt.Sprintf("tool %s: no property %s for its enum", t.Name, prop))
		}
		for _, v := range values {
			p.Enum = append(p.Enum, v)
		}
	}
	if p := in.Properties["limit"]; p != nil {
		zero := 0.0
		p.Minimum = &zero
	}
	out := &jsonschema.Schema{}
	if err := json.Unmarshal([]byte(t.Output), out); err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.Name, err))
	}
	hints := &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, IdempotentHint: t.Idempotent, OpenWorldHint: new(bool)}
	if !t.ReadOnly { // the protocol reads destructiveHint only then
		destructive := t.Destructive
		hints.DestructiveHint = &destructive
	}
	tool := &mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: in, OutputSchema: out, Annotations: hints}
	mcp.AddTool(s, tool, func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		var input mcptools.Input
		if f, ok := fixed[t.Name]; ok {
			input = f
		} else if i, ok := any(in).(mcptools.Input); ok {
			input = i
		} else {
			return nil, nil, fmt.Errorf("tool %s has no command line", t.Name)
		}
		args, err := input.Args()
		if err != nil {
			return nil, nil, err
		}
		stdout, stderr, code := run(ctx, args)
		return result(t, stdout, stderr, code)
	})
}

// result is a command's output as the tool's result: its JSON (the lines
// as a list for a tool that lists), with its warnings as text; a command
// that failed is a tool error, its messages the text.
func result(t mcptools.Tool, stdout, stderr []byte, code int) (*mcp.CallToolResult, any, error) {
	var out json.RawMessage
	ok := code == 0 || code == exitRecoverable
	if ok {
		var err error
		if out, err = parse(t, stdout); err != nil {
			ok = false
		}
	}
	msg := strings.TrimSpace(string(stderr))
	if !ok {
		text := strings.TrimSpace(string(stdout))
		if msg != "" {
			if text != "" {
				text += "\n"
			}
			text += msg
		}
		if text == "" {
			text = "the command printed nothing"
		}
		text += fmt.Sprintf("\n(git evolve exited %d)", code)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}}
	if code != 0 {
		msg = strings.TrimSpace(msg + fmt.Sprintf("\n(git evolve exited %d: the cycle regressed and was reverted)", code))
	}
	if msg != "" {
		res.Content = append(res.Content, &mcp.TextContent{Text: msg})
	}
	return res, out, nil
}

// parse reads a command's JSON, as it printed it: one object, or for a
// tool that lists, the lines as a list under its property.
func parse(t mcptools.Tool, stdout []byte) (json.RawMessage, error) {
	var b bytes.Buffer
	if t.List == "" {
		if err := json.Compact(&b, bytes.TrimSpace(stdout)); err != nil || !isObject(b.Bytes()) {
			return nil, fmt.Errorf("not one JSON object")
		}
		return b.Bytes(), nil
	}
	fmt.Fprintf(&b, "{%q:[", t.List)
	n := 0
	for line := range bytes.Lines(stdout) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		if n > 0 {
			b.WriteByte(',')
		}
		at := b.Len()
		if err := json.Compact(&b, line); err != nil || !isObject(b.Bytes()[at:]) {
			return nil, fmt.Errorf("a line is not a JSON object")
		}
		n++
	}
	b.WriteString("]}")
	return b.Bytes(), nil
}

// isObject says whether compact JSON is an object.
func isObject(js []byte) bool { return len(js) > 0 && js[0] == '{' }

// resource reads the ledger, or one cycle.
func resource(run Runner) mcp.ResourceHandler {
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		uri := req.Params.URI
		args, mime, ok := mcptools.ResourceArgs(uri)
		if !ok {
			return nil, mcp.ResourceNotFoundError(uri)
		}
		stdout, stderr, code := run(ctx, args)
		switch {
		case code == exitUsage && args[0] == "show": // no such cycle
			return nil, mcp.ResourceNotFoundError(uri)
		case code != 0:
			return nil, fmt.Errorf("git evolve %s: %s", args[0], strings.TrimSpace(string(stderr)))
		}
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: mime, Text: string(stdout)}}}, nil
	}
}
