package gate

import (
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// ParseJestJSON reads the JSON report of jest (--json --outputFile), which
// vitest's json reporter writes in the same shape: a test file by its
// testResults entry (name: its path; status; assertionResults), each test
// by its assertion result. A test is named "<file> > <describe> > … >
// <title>", the file's path relative to root when it is under root (jest
// and vitest write absolute paths; root is the directory the runner ran
// in), so that the start and the finish name a test alike. Its status
// passed is passed, failed is failed, and any other (pending, skipped,
// todo, disabled) is skipped. A file whose status is failed with no test
// failing (it failed to run, or a hook failed outside its tests) is
// failed under its path, a group (Census.Groups). A test reported twice
// has the strongest of its outcomes.
//
// It returns an error, and no census, for data that is not such a report.
func ParseJestJSON(data []byte, root string) (*Census, error) {
	var rep struct {
		TestResults *[]struct {
			Name             string `json:"name"`
			Status           string `json:"status"`
			AssertionResults []struct {
				AncestorTitles []string `json:"ancestorTitles"`
				Title          string   `json:"title"`
				FullName       string   `json:"fullName"`
				Status         string   `json:"status"`
			} `json:"assertionResults"`
		} `json:"testResults"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("jest JSON: %v", err)
	}
	if rep.TestResults == nil {
		return nil, fmt.Errorf("jest JSON: no testResults")
	}
	roots := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		roots = append(roots, real)
	}
	t := newTally("jest")
	for _, file := range *rep.TestResults {
		name := relUnder(file.Name, roots)
		failing := false
		for _, a := range file.AssertionResults {
			parts := append(slices.Clone(a.AncestorTitles), a.Title)
			if a.Title == "" {
				parts = []string{a.FullName}
			}
			o := skipped
			switch a.Status {
			case "passed":
				o = passed
			case "failed":
				o, failing = failed, true
			}
			t.merge(name+" > "+strings.Join(parts, " > "), o)
		}
		if file.Status == "failed" && !failing {
			t.merge(name, failed)
			t.group(name)
		}
	}
	return t.census(), nil
}

// relUnder is p relative to the first of roots it is under, with slashes;
// p itself when it is under none.
func relUnder(p string, roots []string) string {
	for _, root := range roots {
		if root == "" {
			continue
		}
		if rel, err := filepath.Rel(root, p); err == nil && filepath.IsAbs(p) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return filepath.ToSlash(rel)
		}
	}
	return p
}

// maxPackageJSON bounds the package.json read for the script npm runs.
const maxPackageJSON = 1 << 20

// jsCountArgs are the arguments that make a command of the gate write
// jest's JSON report to report, and true, when the command is a simple one
// (no pipe, list, substitution or comment) that runs jest or vitest
// (directly, by a path, or through npx, pnpm exec, yarn or bunx), or npm
// running a package script (npm test, npm run NAME) that is such a simple
// command in dir's package.json. A command that already chooses its report
// (--json, --outputFile, --reporter) is left as it is: its report is the
// user's.
func jsCountArgs(command, dir, report string) (string, bool) {
	words, ok := simpleWords(command)
	if !ok {
		return "", false
	}
	if runner := jsRunner(words); runner != "" {
		return " " + jsReportArgs(runner, report), true
	}
	script, hasDashes := npmScript(words)
	if script == "" || dir == "" {
		return "", false
	}
	f, err := os.Open(filepath.Join(dir, "package.json"))
	if err != nil {
		return "", false
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > maxPackageJSON {
		return "", false
	}
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.NewDecoder(f).Decode(&pkg) != nil {
		return "", false
	}
	sw, ok := simpleWords(pkg.Scripts[script])
	if !ok {
		return "", false
	}
	runner := jsRunner(sw)
	if runner == "" {
		return "", false
	}
	if hasDashes {
		return " " + jsReportArgs(runner, report), true
	}
	return " -- " + jsReportArgs(runner, report), true
}

// simpleWords are the words of command when it is one simple command that
// arguments can be added to the end of.
func simpleWords(command string) ([]string, bool) {
	if strings.ContainsAny(command, "|;&\n#`$(){}") {
		return nil, false
	}
	cmds := simpleCommands(command)
	if len(cmds) != 1 {
		return nil, false
	}
	return cmds[0], true
}

// jsRunner is "jest" or "vitest" when words run that runner's tests and
// leave its report to the tool, else "".
func jsRunner(words []string) string {
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	switch {
	case len(words) > 1 && (words[0] == "npx" || words[0] == "bunx" || words[0] == "yarn"):
		words = words[1:]
	case len(words) > 2 && words[0] == "pnpm" && words[1] == "exec":
		words = words[2:]
	}
	if len(words) == 0 {
		return ""
	}
	runner := path.Base(filepath.ToSlash(words[0]))
	if runner != "jest" && runner != "vitest" {
		return ""
	}
	for i, w := range words[1:] {
		if w == "--json" || strings.HasPrefix(w, "--outputFile") || strings.HasPrefix(w, "--reporter") || w == "--watch" || w == "--watchAll" {
			return ""
		}
		if runner == "vitest" && i == 0 && (w == "bench" || w == "list" || w == "init" || w == "watch" || w == "dev") {
			return ""
		}
	}
	return runner
}

// npmScript is the package script an npm command runs (npm test, npm t,
// npm run NAME, npm run-script NAME), and whether the command has "--"
// already; "" when it runs none.
func npmScript(words []string) (string, bool) {
	for len(words) > 0 && isAssignment(words[0]) {
		words = words[1:]
	}
	if len(words) < 2 || words[0] != "npm" {
		return "", false
	}
	script := ""
	rest := words[2:]
	switch words[1] {
	case "test", "t", "tst":
		script = "test"
	case "run", "run-script":
		if len(words) < 3 || strings.HasPrefix(words[2], "-") {
			return "", false
		}
		script, rest = words[2], words[3:]
	default:
		return "", false
	}
	return script, slices.Contains(rest, "--")
}

// jsReportArgs are the arguments that make runner write jest's JSON
// report to report, beside its usual output.
func jsReportArgs(runner, report string) string {
	if runner == "vitest" {
		return "--reporter=default --reporter=json " + shellQuote("--outputFile.json="+report)
	}
	return "--json " + shellQuote("--outputFile="+report)
}
