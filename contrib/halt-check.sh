#!/bin/sh
# halt-check.sh: the evolve loops' kill-switch check, as git-evolve does it.
# Copy it to scripts/evolve/halt-check.sh: exit 0 to go on, non-zero to halt
# (4; 3 when the next cycle must be restorative), --json for the reason.
exec git evolve halt-check "$@"
