#!/bin/sh
# git-evolve commit-msg hook: while a cycle is open in this worktree, adds the
# trailers Evolve-Cycle, Evolve-Id and Evolve-Target to the commit message.
# `git evolve init` installs this file; a commit-msg hook that was there
# before is kept as commit-msg.pre-evolve and runs first.
pre="$(dirname "$0")/commit-msg.pre-evolve"
if [ -x "$pre" ]; then
	"$pre" "$@" || exit $?
fi
exec git evolve hook commit-msg "$@"
