package gitstore

import (
	"runtime"
	"testing"
	"time"
)

// NotesToRewrite reads each level on each object's path and, for every
// object, parses every note of that level before it asks whether the
// level was taken already (seen): a level of n notes beside a subtree
// costs n for each object whose path crosses it. The root is on every
// path: an import's batch (10,000 commits) on a tree with 2,000 notes
// beside one subtree parses 20 million names and allocates their slice
// 10,000 times, where the notes it names are the same 2,000 each time (20,000 notes: 47 s, 19.5 GiB).
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
	if _, err := snap.NotesToRewrite(write[:1]); err != nil { // the trees read
		t.Fatal(err)
	}
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	got, err := snap.NotesToRewrite(write)
	took := time.Since(start)
	runtime.ReadMemStats(&m1)
	if err != nil || len(got) != flat {
		t.Fatalf("named %d (%v), want %d", len(got), err, flat)
	}
	alloc := m1.TotalAlloc - m0.TotalAlloc
	t.Logf("%d objects over %d notes beside a subtree: %v, %d MiB allocated", objs, flat, took, alloc>>20)
	// the notes named are 2,000 hashes (about 40 KiB, twice that with
	// the slice's growth); allow 400 times that
	if alloc > 32<<20 {
		t.Errorf("NotesToRewrite of %d objects allocated %d MiB (%v): the level's notes are parsed for every object", objs, alloc>>20, took)
	}
}
