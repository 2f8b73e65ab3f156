package audit

import (
	"fmt"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// Link is one record attached to a commit by Relink.
type Link struct {
	Cycle  int           `json:"cycle"`
	ID     string        `json:"id"`
	Commit gitstore.Hash `json:"-"`
	From   gitstore.Hash `json:"-"` // the commit the record was on
	// By says how the commit was found: "trailers" (its Evolve-Id names
	// the cycle), "message" (its message names the cycle: a squash commit)
	// or "tree" (its tree is the delivered commit's).
	By string `json:"by"`
}

// RelinkReport is what Relink did and could not do.
type RelinkReport struct {
	Linked []Link `json:"linked"`
	// Missing are cycles that commits' trailers name and the ledger has no
	// record of.
	Missing []Link `json:"missing"`
	// Ambiguous are commits whose tree matches the delivered commits of
	// several records: none is attached.
	Ambiguous []gitstore.Hash `json:"-"`
	DryRun    bool            `json:"dry_run"`
}

// Relink attaches records to the commits of revs (HEAD when empty) that
// carry a cycle's work but have no note of it, as after a cherry-pick, a
// squash merge or a rebase on a server (none of which carry notes): a
// commit whose trailers name a cycle (Evolve-Id, with Evolve-Result) gets
// a copy of that cycle's record; a commit whose message names cycles
// anywhere (a squash commit lists the branch's) gets a copy of each; a
// commit with no note at all whose tree
// is the tree of exactly one record's delivered commit gets a copy of that
// record. The records are copied as they are, so the ledger still holds
// each once (verify sees copies as one record). With dryRun nothing is
// written.
func Relink(l *store.Ledger, dryRun bool, revs ...string) (*RelinkReport, error) {
	repo := l.Repo()
	rep := &RelinkReport{Linked: []Link{}, Missing: []Link{}, DryRun: dryRun}
	list, err := l.List(store.ListOptions{Copies: true})
	if err != nil {
		return nil, err
	}
	byID := map[string][]store.Entry{}
	noted := map[gitstore.Hash]map[string]bool{}
	// delivered are the commits with a record of work (an aborted cycle's
	// record sits on its start, which it did not deliver).
	delivered := map[gitstore.Hash]bool{}
	for _, e := range list.Entries {
		byID[e.Record.ID] = append(byID[e.Record.ID], e)
		if !e.Record.Aborted() {
			delivered[e.Commit] = true
		}
		if noted[e.Commit] == nil {
			noted[e.Commit] = map[string]bool{}
		}
		noted[e.Commit][e.Record.ID] = true
	}
	copies := map[gitstore.Hash][]ledger.Record{}
	add := func(commit gitstore.Hash, e store.Entry, by string) {
		if noted[commit] == nil {
			noted[commit] = map[string]bool{}
		}
		noted[commit][e.Record.ID] = true
		delivered[commit] = true
		copies[commit] = append(copies[commit], e.Record)
		rep.Linked = append(rep.Linked, Link{Cycle: e.Record.Cycle, ID: e.Record.ID, Commit: commit, From: e.Commit, By: by})
	}
	// By trailers.
	commits, err := repo.TrailerLog("Evolve-Result", []string{"Evolve-Cycle", "Evolve-Id", "Evolve-Result"}, revs...)
	if err != nil {
		return nil, err
	}
	for _, tc := range commits {
		id := tc.Trailers["Evolve-Id"]
		if id == "" || noted[tc.Hash][id] {
			continue
		}
		es, ok := byID[id]
		if !ok {
			var n int
			fmt.Sscan(tc.Trailers["Evolve-Cycle"], &n)
			rep.Missing = append(rep.Missing, Link{Cycle: n, ID: id, Commit: tc.Hash, By: "trailers"})
			continue
		}
		add(tc.Hash, es[0], "trailers")
	}
	// By mention: a squash commit's message names the cycles of the branch
	// it squashed (git merge --squash indents their messages; a forge's
	// squash lists them), each attached to it. A commit made inside a cycle
	// (before its delivered commit) names the cycle too, and is not its
	// work's copy.
	ownID := map[gitstore.Hash]string{}
	withID, err := repo.TrailerLog("Evolve-Id", []string{"Evolve-Id", "Evolve-Result"}, revs...)
	if err != nil {
		return nil, err
	}
	for _, tc := range withID {
		if tc.Trailers["Evolve-Result"] == "" {
			ownID[tc.Hash] = tc.Trailers["Evolve-Id"]
		}
	}
	mentions, err := repo.Mentions(revs...)
	if err != nil {
		return nil, err
	}
	for _, m := range mentions {
		for _, id := range m.IDs {
			if noted[m.Hash][id] {
				continue
			}
			es, ok := byID[id]
			if !ok || !ledger.Productive(es[0].Record.Result) {
				continue
			}
			if present, err := repo.HasObject(es[0].Commit); err != nil {
				return nil, err
			} else if present {
				if before, err := repo.IsAncestor(m.Hash, es[0].Commit); err != nil || before {
					continue // made inside the cycle, before its delivered commit
				}
			} else if ownID[m.Hash] == id {
				continue
			}
			add(m.Hash, es[0], "message")
		}
	}
	// By tree: the delivered commits' trees, where this clone has them.
	byTree := map[gitstore.Hash][]store.Entry{}
	for id, es := range byID {
		if !ledger.Productive(es[0].Record.Result) {
			continue
		}
		seen := map[gitstore.Hash]bool{}
		for _, e := range es {
			ci, err := repo.Commit(e.Commit)
			if err != nil || seen[ci.Tree] {
				continue // not fetched, or gone
			}
			seen[ci.Tree] = true
			byTree[ci.Tree] = append(byTree[ci.Tree], byID[id][0])
		}
	}
	args := revs
	if len(args) == 0 {
		args = []string{"HEAD"}
	}
	hashes, err := repo.RevList(args...)
	if err != nil {
		return nil, err
	}
	inCycle := map[gitstore.Hash]bool{} // commits a cycle made: theirs is not a tree to match
	for _, tc := range withID {
		inCycle[tc.Hash] = true
	}
	for _, h := range hashes {
		if delivered[h] || inCycle[h] {
			continue // it has a record already, or belongs to a cycle
		}
		ci, err := repo.Commit(h)
		if err != nil {
			return nil, err
		}
		es := byTree[ci.Tree]
		if len(es) == 1 {
			// A commit the cycle built on (its last commit before an empty
			// delivered one) has the tree too: it is not the work's copy.
			if before, err := repo.IsAncestor(h, es[0].Commit); err == nil && before {
				continue
			}
		}
		switch {
		case len(es) == 1:
			add(h, es[0], "tree")
		case len(es) > 1:
			rep.Ambiguous = append(rep.Ambiguous, h)
		}
	}
	if dryRun || len(copies) == 0 {
		return rep, nil
	}
	if _, err := l.Attach(copies); err != nil {
		return nil, err
	}
	return rep, nil
}
