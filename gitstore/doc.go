// Package gitstore is git-evolve's only door to git: it opens repositories the
// way git does, reads objects through git cat-file and writes them in git's
// formats (go-git's plumbing names them, and encodes the packs an import
// writes), reads refs and their reflogs as
// git's files backend stores them, reads and writes notes trees of any fanout, moves refs with
// compare-and-swap through git's own locking (git update-ref), and keeps the
// linked worktrees a cycle is judged in (Checkout: made with git worktree
// add, switched with git reset --hard and cleaned with git clean). Of the
// working tree it captures the files and the index as trees, saves them as
// git stash shapes a save (CommitSave), switches it, and lists, saves and
// puts back its ignored files, their bytes as they are.
//
// Invariants:
//   - go-git types never cross this package's API; errors are translated into
//     the sentinels and types declared here.
//   - A notes tree written here never holds the same annotated object at two
//     paths, and a write rewrites only the buckets on the path of the notes it
//     changes.
//   - Nothing here prints; callers decide what the user sees.
package gitstore
