#!/bin/sh
# Fetches the ledger the Action's report reads: origin's notes, whole
# (--no-filter: a checkout made with a filter, a partial clone, would leave
# their contents out, and git-evolve's reads never fetch). For a pull
# request from a fork (HEAD_REPO, the URL of the repository its branch is
# in, another than BASE_REPO), the cycles were recorded in the fork's
# ledger: it is fetched as a remote-tracking copy, refs/notes/remotes/fork/,
# which git evolve reads beside origin's when it passes the check a sync
# makes (one that would bring a breach is left out, and said so). A fork
# with no ledger brings nothing; one that cannot be fetched (private to the
# job, the network) is said so as a warning, and the report goes on
# without its cycles.
set -eu
git fetch --no-tags --no-filter origin 'refs/notes/*:refs/notes/*'
if [ -n "${HEAD_REPO:-}" ] && [ "$HEAD_REPO" != "${BASE_REPO:-}" ]; then
	git fetch --no-tags --no-filter --end-of-options "$HEAD_REPO" '+refs/notes/evolve*:refs/notes/remotes/fork/evolve*' ||
		echo "::warning::git-evolve: the ledger of the pull request's repository could not be fetched: its cycles are not in the report"
fi
