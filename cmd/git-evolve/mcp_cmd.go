package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
)

type mcpCmd struct {
	Tools bool `help:"Print the tools the server offers, one a line, and exit."`
}

func (mcpCmd) Help() string {
	return `Serves the loop to an agent over the Model Context Protocol, on standard
input and output (an MCP client starts it: git evolve mcp, or git-evolve -C
<repository> mcp). Each tool runs the git evolve command of the same name in
the repository and returns its JSON:

` + mcpToolList() + `
The ledger is a resource (evolve://ledger: every record, as git evolve
export prints them), and so is each cycle (evolve://cycle/{n}, as git evolve
show --json prints it).

stop, kill, resume and trust are not offered: an agent cannot stop or unleash
its own loop. The commands run as they do from a terminal, with their rules:
inside a git evolve run, what the run refuses to its agent is refused here.`
}

// mcpTool is a tool of the server: a git evolve command with arguments
// from the tool's input.
type mcpTool struct {
	name, description string
	// args builds the command line from the tool's input; the error is the
	// input's fault.
	args func(in map[string]any) ([]string, error)
	// schema is the tool's input schema.
	schema map[string]any
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

func object(required []string, props map[string]any) map[string]any {
	s := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// mcpTools are the tools, in the order they are listed.
var mcpTools = []mcpTool{
	{"status", "Where the loop stands: the open cycle, halts, the last cycles, failing goals, the queue, the ledger against its remote (git evolve status --json).",
		func(map[string]any) ([]string, error) { return []string{"status", "--json"}, nil }, object(nil, map[string]any{})},
	{"next", "The work the next cycle takes from the ladder, and why (git evolve next --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"next", "--json", "--dry-run"}
			if s, ok := in["strategy"].(string); ok && s != "" {
				args = append(args, "--strategy="+s)
			}
			return args, nil
		}, object(nil, map[string]any{"strategy": prop("string", "balanced, innovate, harden, repair, ultrathink or autoresearch")})},
	{"cycle_start", "Open a cycle on a goal, directive or queue item (git evolve cycle start --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"cycle", "start", "--json", "--no-progress"}
			if s, ok := in["target"].(string); ok && s != "" {
				args = append(args, "--target="+s)
			}
			if s, ok := in["item"].(string); ok && s != "" {
				args = append(args, "--item="+s)
			}
			return args, nil
		}, object(nil, map[string]any{"target": prop("string", "the goal or directive id (default: the failing goal with the highest weight)"),
			"item": prop("string", "a work queue item to take")})},
	{"cycle_status", "The open cycle and its work so far (git evolve cycle status --json).",
		func(map[string]any) ([]string, error) { return []string{"cycle", "status", "--json"}, nil }, object(nil, map[string]any{})},
	{"cycle_finish", "Judge the open cycle: the gate runs, the work is committed or reverted, the cycle recorded (git evolve cycle finish --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"cycle", "finish", "--json", "--no-progress"}
			if s, ok := in["message"].(string); ok && s != "" {
				args = append(args, "--message="+s)
			}
			return args, nil
		}, object(nil, map[string]any{"message": prop("string", "the message of the commit that delivers the work (trailers added)")})},
	{"cycle_abort", "Close the open cycle without judging it; its work is saved (git evolve cycle abort).",
		func(in map[string]any) ([]string, error) {
			args := []string{"cycle", "abort"}
			if s, ok := in["reason"].(string); ok && s != "" {
				args = append(args, "--reason="+s)
			}
			return args, nil
		}, object(nil, map[string]any{"reason": prop("string", "why (kept in the record)")})},
	{"goals_measure", "Run the goals' checks and return the fitness snapshot (git evolve goals measure --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"goals", "measure", "--json", "--no-progress"}
			ids, err := stringList(in["goal"])
			for _, id := range ids {
				args = append(args, "--goal="+id)
			}
			return args, err
		}, object(nil, map[string]any{"goal": map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "description": "only these goals"}})},
	{"log", "The cycles in the ledger, one JSON record a line (git evolve log --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"log", "--json"}
			if n, ok := in["limit"].(float64); ok && n > 0 {
				args = append(args, "-n", strconv.Itoa(int(n)))
			}
			if b, ok := in["all"].(bool); ok && b {
				args = append(args, "--all")
			}
			return args, nil
		}, object(nil, map[string]any{"limit": prop("integer", "only the last N cycles"), "all": prop("boolean", "the local journal's idle and unchanged cycles too")})},
	{"show", "The whole record of a cycle, or of the cycles on a commit (git evolve show --json).",
		func(in map[string]any) ([]string, error) {
			q, _ := in["cycle"].(string)
			if q == "" {
				return nil, fmt.Errorf("cycle: a cycle number or a commit is needed")
			}
			return []string{"show", "--json", "--", q}, nil
		}, object([]string{"cycle"}, map[string]any{"cycle": prop("string", "a cycle number, or a revision naming a commit")})},
	{"hypothesis_add", "Record a hypothesis to check at a later cycle (git evolve hypothesis add).",
		func(in map[string]any) ([]string, error) {
			args := []string{"hypothesis", "add"}
			for _, k := range []string{"id", "hypothesis", "measure", "patch"} {
				if s, ok := in[k].(string); ok && s != "" {
					args = append(args, "--"+k+"="+s)
				}
			}
			for _, k := range []string{"cycle_landed", "check_at_cycle"} {
				if n, ok := in[k].(float64); ok {
					args = append(args, "--"+strings.ReplaceAll(k, "_", "-")+"="+strconv.Itoa(int(n)))
				}
			}
			return args, nil
		}, object([]string{"id", "cycle_landed", "check_at_cycle", "hypothesis", "measure"}, map[string]any{
			"id": prop("string", "a unique id, without spaces"), "cycle_landed": prop("integer", "the cycle the change landed in"),
			"check_at_cycle": prop("integer", "the cycle at which to check it"), "hypothesis": prop("string", "what the change is expected to do"),
			"measure": prop("string", "how to tell whether it did"), "patch": prop("string", "what changed")})},
	{"hypothesis_verdict", "Record a hypothesis's verdict, VERIFIED or FALSIFIED (git evolve hypothesis verdict).",
		func(in map[string]any) ([]string, error) {
			id, _ := in["id"].(string)
			v, _ := in["verdict"].(string)
			ev, _ := in["evidence"].(string)
			return []string{"hypothesis", "verdict", "--evidence=" + ev, "--", id, v}, nil
		}, object([]string{"id", "verdict", "evidence"}, map[string]any{"id": prop("string", "the hypothesis"),
			"verdict": map[string]any{"type": "string", "enum": []string{"VERIFIED", "FALSIFIED"}}, "evidence": prop("string", "what the measure found")})},
	{"queue_list", "The work queue's items (git evolve queue list --json).",
		func(in map[string]any) ([]string, error) {
			args := []string{"queue", "list", "--json"}
			if b, ok := in["all"].(bool); ok && b {
				args = append(args, "--all")
			}
			return args, nil
		}, object(nil, map[string]any{"all": prop("boolean", "consumed items too")})},
}

func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("a list of strings is needed")
	}
	var out []string
	for _, x := range list {
		s, ok := x.(string)
		if !ok {
			return nil, fmt.Errorf("a list of strings is needed")
		}
		out = append(out, s)
	}
	return out, nil
}

func mcpToolList() string {
	var b strings.Builder
	for _, t := range mcpTools {
		fmt.Fprintf(&b, "  %-19s %s\n", t.name, t.description)
	}
	return b.String()
}

// mcpRunner runs one git evolve command line in the repository and gives
// back its output and exit code. The server runs them one at a time, in
// this process.
type mcpRunner func(ctx context.Context, args []string) (stdout, stderr []byte, code int)

func (c *mcpCmd) Run(e *env) error {
	if c.Tools {
		for _, t := range mcpTools {
			fmt.Fprintln(e.stdout, t.name)
		}
		return nil
	}
	if _, err := e.Repo(); err != nil {
		return err
	}
	return newMCPServer(inProcess(e.dir, e.getenv)).serve(e.ctx, e.stdin, e.stdout)
}

// inProcess runs git evolve commands in this process, in dir, one at a
// time.
func inProcess(dir string, getenv func(string) string) mcpRunner {
	var mu sync.Mutex
	return func(ctx context.Context, args []string) ([]byte, []byte, int) {
		mu.Lock()
		defer mu.Unlock()
		if ctx.Err() != nil {
			// cancelled while it waited for the one before it: not run
			return nil, []byte("git-evolve: error: cancelled before it ran"), exitRuntime
		}
		var stdout, stderr bytes.Buffer
		code := runContext(ctx, append([]string{"-C", dir, "--color=never"}, args...), strings.NewReader(""), &stdout, &stderr, getenv)
		return stdout.Bytes(), stderr.Bytes(), code
	}
}

// newMCPServer is the server, its tools and resources running commands
// with runner.
func newMCPServer(runner mcpRunner) *mcpServer { return &mcpServer{runner: runner} }
