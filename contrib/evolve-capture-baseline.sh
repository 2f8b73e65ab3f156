#!/bin/sh
# evolve-capture-baseline.sh: the evolve loops' fitness baseline, as git-evolve
# keeps it. Copy it to scripts/evolve-capture-baseline.sh: the seeds' calls
# (--label L --timeout S [--force]) capture the baseline of the goals file's
# era once (stored in git, refs/notes/evolve-fitness, where every clone
# fetches it) and write .agents/evolve/fitness-0-baseline.json, whose
# presence the seeds check first.
exec git evolve goals baseline "$@"
