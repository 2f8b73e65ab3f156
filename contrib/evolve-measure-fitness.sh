#!/bin/sh
# evolve-measure-fitness.sh: the evolve loops' fitness snapshot, as git-evolve
# takes it. Copy it to scripts/evolve-measure-fitness.sh: the seeds' calls
# (--output FILE --timeout S --total-timeout S --goal ID --file GOALS) measure
# the goals and write the snapshot to FILE atomically, in their shape (goals[]
# with id, result, value, threshold, weight), and print its path; a measure
# that fails or runs past --total-timeout leaves FILE as it was (exit 1).
exec git evolve goals measure "$@"
