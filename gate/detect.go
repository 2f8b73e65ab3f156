package gate

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"

	"github.com/git-evolve/git-evolve/goals"
)

// Detected is the project's own test command, found from the files at the
// top of its tree: the gate a goals file without a gate key runs.
type Detected struct {
	Command string `json:"command"`
	From    string `json:"from"` // the file it was found by
	// Tool is the program the command starts, which must be installed.
	Tool string `json:"tool"`
}

// ReadFile reads a file at the top of a tree (a commit's, or the working
// tree's): its content and whether it is there.
type ReadFile func(name string) ([]byte, bool)

// npmDefaultTest is the test script npm init writes: it fails on purpose,
// so a package.json that still has it has no tests.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

// DetectTests finds the project's test command from the files at the top
// of its tree, in this order: go.mod (go test ./...), a Makefile with a test
// target (make test), package.json with a test script (npm test),
// Cargo.toml (cargo test), pyproject.toml, pytest.ini or setup.cfg
// (python3 -m pytest). ok is false when none is there.
func DetectTests(read ReadFile) (d Detected, ok bool) {
	if _, ok := read("go.mod"); ok {
		return Detected{Command: "go test ./...", From: "go.mod", Tool: "go"}, true
	}
	for _, name := range []string{"GNUmakefile", "makefile", "Makefile"} { // GNU make's order
		if data, ok := read(name); ok {
			if hasMakeTarget(data, "test") {
				return Detected{Command: "make test", From: name, Tool: "make"}, true
			}
			break // make reads the first it finds
		}
	}
	if data, ok := read("package.json"); ok {
		var pkg struct {
			Scripts map[string]any `json:"scripts"`
		}
		if json.Unmarshal(data, &pkg) == nil {
			if t, _ := pkg.Scripts["test"].(string); strings.TrimSpace(t) != "" && strings.TrimSpace(t) != npmDefaultTest {
				return Detected{Command: "npm test", From: "package.json", Tool: "npm"}, true
			}
		}
	}
	if _, ok := read("Cargo.toml"); ok {
		return Detected{Command: "cargo test", From: "Cargo.toml", Tool: "cargo"}, true
	}
	for _, name := range []string{"pyproject.toml", "pytest.ini", "setup.cfg"} {
		if _, ok := read(name); ok {
			return Detected{Command: "python3 -m pytest", From: name, Tool: "python3"}, true
		}
	}
	return Detected{}, false
}

// hasMakeTarget reports whether a makefile names target before a colon on
// a rule line (not a variable assignment, a recipe line or a comment).
func hasMakeTarget(data []byte, target string) bool {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '\t' || line[0] == '#' {
			continue
		}
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		colon := strings.IndexByte(line, ':')
		if colon < 0 {
			continue
		}
		if rest := strings.TrimLeft(line[colon+1:], ":"); strings.HasPrefix(rest, "=") || strings.ContainsAny(line[:colon], "=$") {
			continue // NAME := value, NAME ::= value, or a target made of variables
		}
		for _, t := range strings.Fields(line[:colon]) {
			if t == target {
				return true
			}
		}
	}
	return false
}

// Available says why a detected command cannot run here, or nil when its
// tool is installed (and, for python3 -m pytest, pytest is there for it).
func (d Detected) Available() error {
	path, err := exec.LookPath(d.Tool)
	if err != nil {
		return fmt.Errorf("%s is not installed (not found on PATH)", d.Tool)
	}
	if d.Command == "python3 -m pytest" {
		probe := exec.Command(path, "-c", "import importlib.util, sys; sys.exit(importlib.util.find_spec('pytest') is None)")
		if err := probe.Run(); err != nil {
			return fmt.Errorf("pytest is not installed for %s", path)
		}
	}
	return nil
}

// TrustDigest names a detected gate command for trust: it runs only once
// this machine trusts it, as a goals file's checks run only once it trusts
// their file.
func (d Detected) TrustDigest() string { return goals.Digest([]byte("detected gate\x00" + d.Command)) }

// String says what the command is and where it comes from.
func (d Detected) String() string { return d.Command + " (detected from " + d.From + ")" }
