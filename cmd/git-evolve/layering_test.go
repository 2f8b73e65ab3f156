package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// allowed lists, for each package of the module, the module packages it may
// import (docs/architecture.md). Only gitstore may import go-git.
var allowed = map[string][]string{
	"cmd/git-evolve":      {"cycle", "ledger/store", "gitstore", "ledger", "setup", "gate", "journal", "goals", "fitness", "share", "audit", "loop", "queue", "escape", "redact", "mirror", "internal/mcptools", "agents", "internal/buildinfo", "internal/cycletext", "internal/report", "internal/manpage", "internal/completion", "internal/rulerdiff"},
	"cmd/git-evolve-mcp":  {"internal/mcpserver"},
	"internal/mcpserver":  {"internal/mcptools", "internal/buildinfo"},
	"internal/buildinfo":  {},
	"internal/mcptools":   {},
	"internal/cycletext":  {"ledger", "escape"},
	"internal/manpage":    {},
	"internal/completion": {"ledger"},
	"internal/rulerdiff":  {"gitstore", "ledger"},
	"internal/report":     {"ledger/store", "gitstore", "goals", "ledger", "escape", "internal/cycletext", "internal/atomicfile"},
	"loop":                {"cycle", "ledger/store", "gitstore", "goals", "ledger", "queue", "fitness", "filelock", "gate", "escape", "redact", "internal/atomicfile"},
	"audit":               {"ledger/store", "gitstore", "ledger"},
	"mirror":              {"cycle", "ledger/store", "gitstore", "ledger", "journal", "goals", "filelock", "internal/atomicfile"},
	"share":               {"gitstore", "ledger"},
	"internal/testenv":    {},
	"fitness":             {"gitstore", "goals"},
	"goals":               {"redact"},
	"setup":               {"gitstore", "internal/atomicfile"},
	"internal/atomicfile": {},
	"cycle":               {"ledger/store", "gitstore", "ledger", "journal", "gate", "revert", "goals", "filelock", "internal/atomicfile"},
	"ledger/store":        {"gitstore", "ledger", "journal", "filelock", "internal/atomicfile"},
	"filelock":            {},
	"queue":               {"filelock", "escape"},
	"gate":                {"goals"},
	"revert":              {"gitstore"},
	"journal":             {"ledger"},
	"ledger":              {},
	"redact":              {},
	"gitstore":            {},
	"escape":              {},
	"agents":              {"internal/atomicfile"},
}

// kongUsers are the packages that may import kong: the face, and what
// renders its model of the commands.
var kongUsers = map[string]bool{"cmd/git-evolve": true, "internal/manpage": true, "internal/completion": true}

func TestLayering(t *testing.T) {
	root := "../.."
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != root || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(path))
		rel = filepath.ToSlash(rel)
		if strings.HasPrefix(rel, "bench") {
			return nil
		}
		ok, known := allowed[rel]
		if !known {
			t.Errorf("package %s is not in the layering table: add it to docs/architecture.md and this test", rel)
			return nil
		}
		seen[rel] = true
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.HasPrefix(p, "github.com/go-git/") && rel != "gitstore" {
				t.Errorf("%s imports %s: only gitstore may import go-git", path, p)
			}
			// The protocol's SDK is linked into git-evolve-mcp alone: in
			// git-evolve it would slow every command's start.
			if strings.HasPrefix(p, "github.com/modelcontextprotocol/") && rel != "internal/mcpserver" && !strings.HasSuffix(path, "_test.go") {
				t.Errorf("%s imports %s: only internal/mcpserver may import the MCP SDK", path, p)
			}
			// kong's model of the commands is the face's: the generators
			// that render it (manual pages, completion) take it from there.
			if p == "github.com/alecthomas/kong" && !kongUsers[rel] {
				t.Errorf("%s imports %s: only the face and what renders its model may import kong", path, p)
			}
			if mod, ok2 := strings.CutPrefix(p, "github.com/git-evolve/git-evolve/"); ok2 && !slices.Contains(ok, mod) &&
				!(mod == "internal/testenv" && strings.HasSuffix(path, "_test.go")) && // every package's tests may use it
				!(mod == "internal/mcpserver" && rel == "cmd/git-evolve" && strings.HasSuffix(path, "_test.go")) { // the scripts run the server
				t.Errorf("%s imports %s, which is not below it (docs/architecture.md)", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p := range allowed {
		if !seen[p] {
			t.Errorf("package %s in the layering table has no Go files", p)
		}
	}
}
