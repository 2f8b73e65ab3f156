// Package completion completes git-evolve's command lines in bash, zsh and
// fish: the scripts each shell loads (Script), which ask git evolve
// __complete for the candidates, and the candidates themselves (Complete),
// from kong's model of the commands: commands, flags, and values (a flag's
// enum, results, shells, commands, and what only the repository knows:
// remotes, goal ids, cycle numbers, asked of a Lookup). It never fails
// aloud: what cannot be read completes nothing.
package completion

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/ledger"
)

// Shells are the shells Script has a script for.
var Shells = []string{"bash", "zsh", "fish"}

// Script is the completion script of shell (one of Shells; "" for another).
func Script(shell string) string { return scripts[shell] }

// Lookup lists the values of a complete tag that the repository holds:
// "remotes" (its remotes), "goals" (the goal and directive ids of its goals
// file) and "cycles" (the latest cycle numbers, the latest first); nil when
// it cannot read them.
type Lookup func(tag string) []string

// The scripts ask 'git evolve __complete' for the candidates: bash with the
// line up to the cursor (its own word splitting breaks words at '=' and
// ':'), zsh and fish with the words before the cursor and the current one.
var scripts = map[string]string{
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

// Complete lists the candidates for the word under the cursor of a
// command line: line is the command line up to the cursor (bash, whose own
// word splitting breaks words at '=' and ':'), else words are the words
// before the cursor, then the word under it (zsh, fish; a first "--" is
// dropped). root is the model of every command.
func Complete(root *kong.Node, line string, words []string, lookup Lookup) []string {
	if len(words) > 0 && words[0] == "--" {
		words = words[1:]
	}
	byLine := line != ""
	if byLine {
		words = strings.Fields(line)
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			words = append(words, "")
		}
	}
	if len(words) == 0 {
		words = []string{""}
	}
	return completions(root, lookup, afterEvolve(words[:len(words)-1]), words[len(words)-1], byLine)
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
func completions(root *kong.Node, lookup Lookup, before []string, cur string, line bool) []string {
	node := root
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
		cands = valuesOf(root, lookup, pending.Value)
	case strings.HasPrefix(cur, "--") && strings.Contains(cur, "="):
		name, val, _ := strings.Cut(cur, "=")
		if f, _ := flagOf(node, name); f != nil {
			for _, v := range valuesOf(root, lookup, f.Value) {
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
			cands = append(cands, valuesOf(root, lookup, node.Positional[positional])...)
		} else if n := len(node.Positional); n > 0 && node.Positional[n-1].IsSlice() {
			cands = append(cands, valuesOf(root, lookup, node.Positional[n-1])...)
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
// complete tag names (those the repository holds from lookup).
func valuesOf(root *kong.Node, lookup Lookup, v *kong.Value) []string {
	if v.Enum != "" {
		return strings.Split(v.Enum, ",")
	}
	switch tag := v.Tag.Get("complete"); tag {
	case "results":
		return ledger.Results
	case "shells":
		return slices.Clone(Shells)
	case "commands":
		var out []string
		for _, child := range root.Children {
			if child.Type == kong.CommandNode && !child.Hidden {
				out = append(out, child.Name)
			}
		}
		return out
	case "remotes", "goals", "cycles":
		if lookup != nil {
			return lookup(tag)
		}
	}
	return nil
}
