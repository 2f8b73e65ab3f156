package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
)

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" complete:"shells" help:"The shell: bash, zsh or fish."`
}

func (completionCmd) Help() string {
	return `Prints a completion script; the candidates come from git evolve itself
(commands, flags, and values: goal ids for --target, results for --result,
remotes for sync, cycle numbers for show and revert).

  bash: add to ~/.bashrc:   eval "$(git evolve completion bash)"
        It defines _git_evolve, which git's own completion calls for
        'git evolve <TAB>', and completes git-evolve as a command too.
  zsh:  add to ~/.zshrc:    eval "$(git evolve completion zsh)"
        (after compinit). It defines _git-evolve, which zsh's git completion
        calls for 'git evolve <TAB>'.
  fish: git evolve completion fish > ~/.config/fish/completions/git-evolve.fish`
}

func (c *completionCmd) Run(e *env) error {
	_, err := fmt.Fprint(e.stdout, completionScripts[c.Shell])
	return err
}

// The scripts ask 'git evolve __complete' for the candidates: bash with the
// line up to the cursor (its own word splitting breaks words at '=' and
// ':'), zsh and fish with the words before the cursor and the current one.
var completionScripts = map[string]string{
	"bash": `# git evolve completion for bash: eval "$(git evolve completion bash)"
_git_evolve() {
	local IFS=$'\n'
	local c
	COMPREPLY=()
	for c in $(git evolve __complete --line "${COMP_LINE:0:COMP_POINT}" 2>/dev/null); do
		COMPREPLY+=("$c ")
	done
}
complete -o bashdefault -o default -o nospace -F _git_evolve git-evolve
`,
	"zsh": `# git evolve completion for zsh: eval "$(git evolve completion zsh)"
_git-evolve() {
	local -a cands
	cands=("${(@f)$(git evolve __complete -- "${(@)words[1,CURRENT-1]}" "${words[CURRENT]}" 2>/dev/null)}")
	cands=(${cands:#})
	(( ${#cands} )) && compadd -Q -- "${cands[@]}" || _default
}
compdef _git-evolve git-evolve
zstyle ':completion:*:*:git:*' user-commands evolve:'the harness and shared ledger of evolve loops'
`,
	"fish": `# git evolve completion for fish: git evolve completion fish > ~/.config/fish/completions/git-evolve.fish
function __git_evolve_complete
	git evolve __complete -- (commandline -opc) (commandline -ct) 2>/dev/null
end
complete -c git-evolve -f -a '(__git_evolve_complete)'
complete -c git -n '__fish_seen_subcommand_from evolve' -f -a '(__git_evolve_complete)'
complete -c git -n '__fish_use_subcommand' -f -a evolve -d 'the harness and shared ledger of evolve loops'
`,
}

// completeCmd is what the completion scripts run.
type completeCmd struct {
	Line  string   `name:"line" help:"The command line up to the cursor (bash)."`
	Words []string `arg:"" optional:"" passthrough:"" help:"The words before the cursor, then the word under it."`
}

func (c *completeCmd) Run(e *env) error {
	words := c.Words
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	line := c.Line != ""
	if line {
		words = strings.Fields(c.Line)
		if strings.HasSuffix(c.Line, " ") || strings.HasSuffix(c.Line, "\t") {
			words = append(words, "")
		}
	}
	if len(words) == 0 {
		words = []string{""}
	}
	for _, cand := range completions(e, afterEvolve(words[:len(words)-1]), words[len(words)-1], line) {
		fmt.Fprintln(e.stdout, cand)
	}
	return nil
}

// afterEvolve drops what comes before git-evolve's own arguments: "git
// [options] evolve" or the git-evolve command.
func afterEvolve(words []string) []string {
	for i, w := range words {
		if w == "evolve" || filepath.Base(w) == "git-evolve" {
			return words[i+1:]
		}
	}
	return words
}

// completions lists what may stand for cur after the words before it, those
// that start with cur. bash breaks a word at '=', so for --flag=val it
// completes val alone (line); zsh and fish get the whole word.
func completions(e *env, before []string, cur string, line bool) []string {
	node, err := fullModel()
	if err != nil {
		return nil
	}
	var pending *kong.Flag // a flag whose value comes next
	positional := 0
	for _, w := range before {
		switch {
		case pending != nil:
			pending = nil
		case w == "--":
			positional++
		case strings.HasPrefix(w, "-") && len(w) > 1:
			f, hasValue := flagOf(node, w)
			if f != nil && !f.IsBool() && !f.IsCounter() && !hasValue {
				pending = f
			}
		default:
			if child := childOf(node, w); child != nil && positional == 0 {
				node = child
				continue
			}
			positional++
		}
	}
	var cands []string
	switch {
	case pending != nil:
		cands = valuesOf(e, pending.Value)
	case strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, val, _ := strings.Cut(cur, "=")
		if f, _ := flagOf(node, name); f != nil {
			for _, v := range valuesOf(e, f.Value) {
				if strings.HasPrefix(v, val) {
					cands = append(cands, v)
				}
			}
			if !line {
				for i := range cands {
					cands[i] = name + "=" + cands[i]
				}
			}
		}
		return cands
	case strings.HasPrefix(cur, "-"):
		for n := node; n != nil; n = n.Parent {
			for _, f := range n.Flags {
				if f.Hidden {
					continue
				}
				cands = append(cands, "--"+f.Name)
				if f.Short != 0 {
					cands = append(cands, "-"+string(f.Short))
				}
			}
		}
		cands = append(cands, "--help")
	default:
		if positional == 0 {
			for _, child := range node.Children {
				if child.Type == kong.CommandNode && !child.Hidden {
					cands = append(cands, child.Name)
				}
			}
		}
		if positional < len(node.Positional) {
			cands = append(cands, valuesOf(e, node.Positional[positional])...)
		} else if n := len(node.Positional); n > 0 && node.Positional[n-1].IsSlice() {
			cands = append(cands, valuesOf(e, node.Positional[n-1])...)
		}
	}
	var out []string
	for _, c := range cands {
		if strings.HasPrefix(c, cur) && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// flagOf finds the flag a word names on node or a command above it, and
// whether the word carries its value (--flag=value).
func flagOf(node *kong.Node, w string) (*kong.Flag, bool) {
	name, _, hasValue := strings.Cut(w, "=")
	for n := node; n != nil; n = n.Parent {
		for _, f := range n.Flags {
			if "--"+f.Name == name || slices.ContainsFunc(f.Aliases, func(a string) bool { return "--"+a == name }) {
				return f, hasValue
			}
			if f.Short != 0 && strings.HasPrefix(w, "-"+string(f.Short)) && !strings.HasPrefix(w, "--") {
				return f, len(w) > 2
			}
		}
	}
	return nil, false
}

func childOf(node *kong.Node, w string) *kong.Node {
	for _, c := range node.Children {
		if c.Type == kong.CommandNode && (c.Name == w || slices.Contains(c.Aliases, w)) {
			return c
		}
	}
	return nil
}

// valuesOf lists the values a flag or argument takes: its enum, or what its
// complete tag names, read from the repository (nothing when it cannot be
// read: completion never fails aloud).
func valuesOf(e *env, v *kong.Value) []string {
	if v.Enum != "" {
		return strings.Split(v.Enum, ",")
	}
	switch v.Tag.Get("complete") {
	case "results":
		return ledger.Results
	case "shells":
		return []string{"bash", "zsh", "fish"}
	case "commands":
		root, err := fullModel()
		if err != nil {
			return nil
		}
		var out []string
		for _, child := range root.Children {
			if child.Type == kong.CommandNode && !child.Hidden {
				out = append(out, child.Name)
			}
		}
		return out
	case "remotes":
		repo, err := e.Repo()
		if err != nil {
			return nil
		}
		remotes, _ := repo.Remotes()
		return remotes
	case "goals":
		path, err := goalsFile{}.path(e)
		if err != nil {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		f, _ := goals.Parse(path, data)
		if f == nil {
			return nil
		}
		var out []string
		for _, g := range f.Goals {
			out = append(out, g.ID)
		}
		for _, d := range f.Gaps() {
			out = append(out, d.ID)
		}
		return out
	case "cycles":
		l, err := e.Ledger()
		if err != nil {
			return nil
		}
		ls, err := l.Entries(cycle.ListOptions{Journal: true}, nil, 50)
		if err != nil {
			return nil
		}
		var out []string
		for i := len(ls.Entries) - 1; i >= 0; i-- { // the latest first
			out = append(out, strconv.Itoa(ls.Entries[i].Record.Cycle))
		}
		return out
	}
	return nil
}
