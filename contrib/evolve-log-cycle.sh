#!/bin/sh
# evolve-log-cycle.sh: the evolve loops' cycle writer, as git-evolve does it.
# Copy it to scripts/evolve-log-cycle.sh: the seeds' calls (--cycle --target
# --result --canonical-sha --cycle-start-sha --goals-passing --goals-total
# --goal-ids --parallel --trace-json …) record the cycle in the ledger
# (refs/notes/evolve) or, when idle, in the local journal.
exec git evolve record "$@"
