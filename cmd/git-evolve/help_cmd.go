package main

import (
	"github.com/alecthomas/kong"

	"github.com/git-evolve/git-evolve/agents"
)

// helpCmd is git evolve help [command…]: what git evolve [command…] --help
// prints. git turns git evolve --help into a manual page lookup; this
// needs none.
type helpCmd struct {
	Command []string `complete:"commands" arg:"" optional:"" name:"command" help:"The command, and its subcommand, to describe."`
	Skill   bool     `name:"skill" help:"Print the agent skill (SKILL.md) of this version, which git evolve init --agent installs, for any other agent's skills folder."`
}

func (c helpCmd) Run(ctx *kong.Context, e *env) error {
	if c.Skill {
		if len(c.Command) > 0 {
			return usagef("--skill takes no command")
		}
		_, err := e.stdout.Write(agents.Skill(currentVersion().Version))
		return err
	}
	if len(c.Command) > 0 && commandOf(ctx.Kong, c.Command) == "" {
		return usagef("no command %q: git evolve help lists them", c.Command[0])
	}
	// Parsing "… --help" prints the help and ends the run, exit 0.
	_, err := ctx.Kong.Parse(append(append([]string{}, c.Command...), "--help"))
	return err
}
