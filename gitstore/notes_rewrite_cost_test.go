package gitstore

import (
	"testing"
)

// NotesToRewrite reads each level once, whatever the number of objects
// whose paths cross it: an import's batch (10,000 commits) on a tree with
// 2,000 notes beside one subtree names those 2,000 once. (Looking at the
// root's notes for each object parsed 20 million names; with 20,000 notes
// beside the subtree, 47 s and 19.5 GiB.) Measured in allocations, which
// a loaded machine does not change.
func TestNotesToRewriteCostFollowsTheLevels(t *testing.T) {
	r := newRepo(t)
	setEnv(t)
	repo := r.open()
	const flat, objs = 2000, 10000
	blob := blobOf(t, repo, "n\n")
	var root []treeEntry
	for i := 0; i < flat; i++ {
		root = append(root, treeEntry{name: fakeObj(i).String(), hash: blob})
	}
	// one subtree: the other notes are beside it
	o := fakeObj(flat)
	root = append(root, treeEntry{name: o.String()[:2], dir: true, hash: mustTreeOf(t, repo, treeEntry{name: o.String()[2:], hash: blob})})
	snap := &Notes{r: repo, tree: mustTreeOf(t, repo, root...)}
	var write []Hash
	for i := 0; i < objs; i++ {
		write = append(write, fakeObj(1<<22+i))
	}
	var got []Hash
	var err error
	allocs := testing.AllocsPerRun(1, func() { got, err = snap.NotesToRewrite(write) })
	if err != nil || len(got) != flat {
		t.Fatalf("named %d (%v), want %d", len(got), err, flat)
	}
	t.Logf("%d objects over %d notes beside a subtree: %.0f allocations", objs, flat, allocs)
	// a few for each note named and each object written; one for each
	// note of the level for each object would be 20 million
	if allocs > 10*(flat+objs) {
		t.Errorf("NotesToRewrite of %d objects made %.0f allocations: the level's notes are parsed for every object", objs, allocs)
	}
}
