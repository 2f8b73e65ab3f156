package audit

import (
	"errors"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// An object the ledger stands for that is not in the object store (a
// notes commit, a notes tree, a note; git fsck reports it missing) is a
// breach: the ledger cannot be read whole, and what verify would say of it
// is unknown. Verify names each such object it finds and what it is: the
// ledger's tip (the local ref and the remote-tracking copies it is read
// with), what the tips' notes trees hold, and the commits of the ledger's
// history it reads.

// missingReport is the report of a verify that could not read the ledger:
// the objects it stands for that are missing, each a breach; nil when none
// is (the read failed for another reason, which the caller returns).
func missingReport(l *store.Ledger, rd *ledgerReads) *Report {
	repo := l.Repo()
	rep := &Report{Findings: []Finding{}}
	tips := append([]gitstore.Hash(nil), rd.sources...)
	if local, ok, err := repo.RefHash(store.NotesRef); err == nil && ok && !containsHash(tips, local) {
		tips = append([]gitstore.Hash{local}, tips...)
	}
	types, err := repo.ObjectTypes(tips)
	if err != nil {
		return nil
	}
	for i, tip := range tips {
		switch types[i] {
		case "":
			f := rep.add(Breach, "missing", "the ledger's notes commit %s (%s) is missing from the object store (git fsck names it): the ledger cannot be read; %s",
				tip.Short(), tipName(repo, tip), missingHint)
			f.NotesCommit = tip.String()
			continue
		case "commit":
		default:
			f := rep.add(Breach, "missing", "the ledger's tip %s (%s) is a %s, not a notes commit: the ledger cannot be read; %s", tip.Short(), tipName(repo, tip), types[i], missingHint)
			f.NotesCommit = tip.String()
			continue
		}
		missing, paths, err := repo.MissingInTree(tip)
		if err != nil {
			return nil
		}
		for _, h := range missing {
			what := "an object of its notes tree"
			if p, ok := paths[h]; ok {
				if obj, isNote := notePath(p); isNote {
					what = "the note on " + obj.Short()
				} else {
					what = "its entry " + p
				}
			}
			f := rep.add(Breach, "missing", "%s of the ledger's notes commit %s (%s), object %s, is missing from the object store (git fsck names it); %s",
				what, tip.Short(), tipName(repo, tip), h.Short(), missingHint)
			f.NotesCommit = tip.String()
			if obj, isNote := notePath(paths[h]); isNote {
				f.Commit = obj.String()
			}
		}
		if err := missingHistory(repo, rep, tip); err != nil {
			return nil
		}
	}
	if len(rep.Findings) == 0 {
		return nil
	}
	return rep
}

// missingHint says what to do about an object the ledger lacks.
const missingHint = "fetch it again from a clone that has it (git evolve sync); git evolve repair builds the ledger again when it is the tip that is missing and this clone's saved view still holds what it held"

// missingHistory reports the commits of the ledger's history from tip
// that are missing, naming the commit that has each as a parent.
func missingHistory(repo *gitstore.Repo, rep *Report, tip gitstore.Hash) error {
	type visit struct{ commit, child gitstore.Hash }
	seen := map[gitstore.Hash]bool{tip: true}
	todo := []visit{{commit: tip}}
	for len(todo) > 0 {
		batch := todo[:min(len(todo), historyBatch)]
		todo = todo[len(batch):]
		hs := make([]gitstore.Hash, len(batch))
		for i, v := range batch {
			hs[i] = v.commit
		}
		infos, errs, err := repo.Commits(hs)
		if err != nil {
			return err
		}
		for i, ci := range infos {
			if errs[i] != nil {
				if v := batch[i]; !v.child.IsZero() && errors.Is(errs[i], gitstore.ErrObjectNotFound) {
					f := rep.add(Breach, "missing", "notes commit %s of the ledger's history, the parent of %s, is missing from the object store (git fsck names it); %s", v.commit.Short(), v.child.Short(), missingHint)
					f.NotesCommit = v.commit.String()
				}
				continue
			}
			for _, p := range ci.Parents {
				if !seen[p] {
					seen[p] = true
					todo = append(todo, visit{p, ci.Hash})
				}
			}
		}
	}
	return nil
}

// tipName says which ref has tip.
func tipName(repo *gitstore.Repo, tip gitstore.Hash) string {
	if h, ok, err := repo.RefHash(store.NotesRef); err == nil && ok && h == tip {
		return store.NotesRef
	}
	return "a remote-tracking copy of the ledger"
}

// notePath reads the object a note's path names (any fanout).
func notePath(path string) (gitstore.Hash, bool) {
	h, err := gitstore.ParseHash(strings.ReplaceAll(path, "/", ""))
	return h, err == nil && path != ""
}

func containsHash(hs []gitstore.Hash, h gitstore.Hash) bool {
	for _, x := range hs {
		if x == h {
			return true
		}
	}
	return false
}
