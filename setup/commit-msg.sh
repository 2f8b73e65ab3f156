#!/bin/sh
# git-evolve commit-msg hook: while a cycle is open in this worktree, adds the
# trailers Evolve-Cycle, Evolve-Id and Evolve-Target to the commit message.
# `git evolve init` installs this file. It never stops a commit: without
# git-evolve on PATH it does nothing.
command -v git-evolve >/dev/null 2>&1 || exit 0
git evolve hook commit-msg "$@" || true
