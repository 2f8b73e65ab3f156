// Command git-evolve-mcp serves git-evolve's loop to an agent over the
// Model Context Protocol, on standard input and output; git evolve mcp
// runs it. It is a program of its own so that the protocol's SDK is linked
// into it alone, not into every git evolve command.
package main

import (
	"os"

	"github.com/git-evolve/git-evolve/internal/mcpserver"
)

// version is the release, set by the release build (-ldflags -X).
var version string

func main() {
	os.Exit(mcpserver.Main(version, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
