package manpage

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// testCLI has what the pages render: global flags, commands with
// subcommands, arguments, short flags, aliases, defaults, a hidden command
// and flag, and texts roff would read as requests.
type testCLI struct {
	Chdir string `short:"C" placeholder:"PATH" help:"Run as if started in PATH."`

	Log struct {
		Limit int    `short:"n" aliases:"max-count" default:"20" help:"At most N records."`
		All   bool   `help:"Every record."`
		Range string `arg:"" optional:"" help:".starts with a dot"`
	} `cmd:"" help:"List the cycles." `
	Cycle struct {
		Start struct {
			Target string `help:"'quoted' first, a back\\slash."`
		} `cmd:"" help:"Open a cycle."`
	} `cmd:"" help:"Open and close cycles."`
	Secret struct {
		Hidden bool `hidden:"" help:"not shown"`
	} `cmd:"" hidden:"" help:"A hidden command."`
}

func (testCLI) Help() string { return "" }

func model(t *testing.T) *kong.Node {
	t.Helper()
	var c testCLI
	k, err := kong.New(&c, kong.Name("git-evolve"))
	if err != nil {
		t.Fatal(err)
	}
	return k.Model.Node
}

// A page a command that is not hidden, each naming its flags, arguments and
// subcommands, no line read as a request.
func TestPages(t *testing.T) {
	root := model(t)
	pages := Pages(root, "The harness.\n\nExamples:\n  git evolve log\n.dot", "1.2.3")
	var names []string
	for name := range pages {
		names = append(names, name)
	}
	if got, want := strings.Join(sorted(names), " "), "git-evolve-cycle-start.1 git-evolve-cycle.1 git-evolve-log.1 git-evolve.1"; got != want {
		t.Errorf("pages %s, want %s", got, want)
	}
	macros := []string{".TH ", ".SH ", ".TP", ".B ", ".I ", ".PP", ".nf", ".fi", ".ad l", ".nh"}
	for name, page := range pages {
		for _, line := range strings.Split(strings.TrimSuffix(string(page), "\n"), "\n") {
			if (strings.HasPrefix(line, ".") || strings.HasPrefix(line, "'")) && !hasAnyPrefix(line, macros) {
				t.Errorf("%s: a line roff reads as a request: %q", name, line)
			}
		}
	}
	log := string(pages["git-evolve-log.1"])
	for _, want := range []string{
		".TH GIT-EVOLVE-LOG 1 \"\" \"git-evolve 1.2.3\" \"Git Evolve Manual\"\n",
		".B git evolve log [options] [<range>]\n",
		".B \\-n, \\-\\-limit, \\-\\-max\\-count \\fI20\\fR\nAt most N records. (default: 20)\n",
		".B \\-\\-all\nEvery record.\n",
		".SH GLOBAL OPTIONS\n",
		".TP\n.B \\-C, \\-\\-chdir \\fIPATH\\fR\n",
		".SH SEE ALSO\n\\fBgit-evolve\\fR(1)\n",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("git-evolve-log.1 lacks %q:\n%s", want, log)
		}
	}
	top := string(pages["git-evolve.1"])
	for _, want := range []string{
		"git-evolve \\- the harness and the shared ledger for evolve loops\n",
		".nf\nExamples:\n  git evolve log\n\\&.dot\n.fi\n",
		".TP\n.B cycle\nOpen and close cycles.\nSee \\fBgit-evolve-cycle\\fR(1).\n",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("git-evolve.1 lacks %q:\n%s", want, top)
		}
	}
	if strings.Contains(top, "secret") {
		t.Error("git-evolve.1 lists the hidden command")
	}
}

func TestInstall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man", "man1")
	pages := Pages(model(t), "The harness.", "1.2.3")
	if _, err := Install(dir, pages); err != nil {
		t.Fatal(err)
	}
	for name, page := range pages {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(data) != string(page) {
			t.Errorf("%s: %v, or not the page", name, err)
		}
	}
}

func TestRoffEscapes(t *testing.T) {
	for in, want := range map[string]string{
		`a\b`:      `a\eb`,
		"--flag":   `\-\-flag`,
		".starts":  `\&.starts`,
		"'quoted'": `\&'quoted'`,
	} {
		if got := Roff(in); got != want {
			t.Errorf("Roff(%q) = %q, want %q", in, got, want)
		}
	}
}

func hasAnyPrefix(s string, ps []string) bool {
	for _, p := range ps {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}
