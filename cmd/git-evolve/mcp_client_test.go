package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpClientMain is the scripts' mcp-client: the protocol's SDK as a
// client of git evolve mcp, started in the current directory.
//
//	mcp-client list              each tool: name, annotations, output schema
//	mcp-client call NAME [JSON]  the result: isError, structured content, text
//	mcp-client read URI          the resource's text
func mcpClientMain() int {
	args := os.Args[1:]
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: mcp-client list | call NAME [JSON] | read URI")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "mcp-client", Version: "v0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: exec.Command("git", "evolve", "mcp")}, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "mcp-client: connect:", err)
		return 1
	}
	defer session.Close()
	show := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	switch args[0] {
	case "list":
		res, err := session.ListTools(ctx, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcp-client:", err)
			return 1
		}
		for _, t := range res.Tools {
			fmt.Printf("%s %s output=%v\n", t.Name, show(t.Annotations), t.OutputSchema != nil)
		}
	case "call":
		var in map[string]any
		if len(args) > 2 {
			if err := json.Unmarshal([]byte(args[2]), &in); err != nil {
				fmt.Fprintln(os.Stderr, "mcp-client: the arguments:", err)
				return 2
			}
		}
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: args[1], Arguments: in})
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcp-client:", err)
			return 1
		}
		fmt.Printf("isError: %v\nstructured: %s\n", res.IsError, show(res.StructuredContent))
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				fmt.Printf("text: %s\n", tc.Text)
			}
		}
	case "read":
		res, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: args[1]})
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcp-client:", err)
			return 1
		}
		for _, c := range res.Contents {
			fmt.Print(c.Text)
		}
	default:
		fmt.Fprintln(os.Stderr, "mcp-client: unknown", args[0])
		return 2
	}
	return 0
}
