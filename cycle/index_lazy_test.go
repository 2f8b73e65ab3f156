package cycle

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/git-evolve/git-evolve/filelock"
	"github.com/git-evolve/git-evolve/gitstore"
)

func objN(i int) gitstore.Hash {
	var h gitstore.Hash
	copy(h[:], fmt.Sprintf("%020d", i))
	return h
}

// What a lazily read index answers (the largest cycle, the commits of a
// cycle) is what the whole file says, through rewrites (sorted), appends
// (an unsorted tail, cycles below the top, copies of one cycle on several
// commits) and the rewrite a long tail brings.
func TestIndexLazyAnswersAsTheWholeFile(t *testing.T) {
	defer func(n int) { unsortedMin = n }(unsortedMin)
	unsortedMin = 5
	path := filepath.Join(t.TempDir(), "cycles.idx")
	rng := rand.New(rand.NewPCG(1, 2))
	var all []indexEntry
	ix := &index{saved: -1}
	for i := 0; i < 40; i++ {
		e := indexEntry{objN(i), int32(rng.IntN(30) + 1)}
		ix.entries = append(ix.entries, e)
		all = append(all, e)
	}
	if err := ix.save(path); err != nil {
		t.Fatal(err)
	}
	next := 40
	for round := 0; round < 12; round++ {
		lazy, err := readIndex(path)
		if err != nil || lazy == nil || lazy.file == nil {
			t.Fatalf("round %d: %v %v", round, lazy, err)
		}
		// a few records on new commits: one above the top, one below it,
		// one a copy of the top on another commit
		top := 0
		for _, e := range all {
			top = max(top, int(e.cycle))
		}
		for _, c := range []int{top + 1, rng.IntN(top) + 1, top + 1} {
			lazy.add(objN(next), []int{c})
			all = append(all, indexEntry{objN(next), int32(c)})
			next++
		}
		check := func(when string, got *index) {
			t.Helper()
			wantTop := 0
			for _, e := range all {
				wantTop = max(wantTop, int(e.cycle))
			}
			if m := got.max(); m != wantTop {
				t.Fatalf("round %d %s: max %d, want %d", round, when, m, wantTop)
			}
			for n := 0; n <= wantTop+1; n++ {
				var want []gitstore.Hash
				for _, e := range all {
					if int(e.cycle) == n && !slices.Contains(want, e.obj) {
						want = append(want, e.obj)
					}
				}
				have, err := got.holders(n)
				if err != nil {
					t.Fatal(err)
				}
				slices.SortFunc(want, func(a, b gitstore.Hash) int { return slices.Compare(a[:], b[:]) })
				slices.SortFunc(have, func(a, b gitstore.Hash) int { return slices.Compare(a[:], b[:]) })
				if !slices.Equal(have, want) {
					t.Fatalf("round %d %s: cycle %d on %v, want %v", round, when, n, have, want)
				}
			}
		}
		check("before saving", lazy)
		if err := lazy.save(path); err != nil {
			t.Fatal(err)
		}
		check("after saving", lazy)
		again, err := readIndex(path)
		if err != nil || again == nil {
			t.Fatalf("round %d: reread: %v", round, err)
		}
		check("read again", again)
		if err := again.load(); err != nil {
			t.Fatal(err)
		}
		if len(again.entries) != len(all) {
			t.Fatalf("round %d: %d entries, want %d", round, len(again.entries), len(all))
		}
		check("loaded", again)
	}
	// the tail grew past unsortedMin more than once: the file was sorted again
	final, _ := readIndex(path)
	if final.file.sorted == 0 || final.file.count-final.file.sorted > unsortedMax(final.file.count) {
		t.Errorf("sorted %d of %d", final.file.sorted, final.file.count)
	}
}

// A header that does not describe its file is a damaged index (rebuilt by
// loadIndex), and an appender that finds the file locked leaves it alone.
func TestIndexDamagedHeaderAndTakingTurns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cycles.idx")
	ix := &index{saved: -1, entries: []indexEntry{{objN(1), 1}, {objN(2), 2}}}
	if err := ix.save(path); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(path)
	word := func(i int) int { return len(indexMagic) + 20 + 4*i }
	for name, edit := range map[string]func(b []byte){
		"count":  func(b []byte) { b[word(0)+3] = 3 },
		"sorted": func(b []byte) { b[word(1)+3] = 3 },
		"no top": func(b []byte) { b[word(3)+3] = 0 },
		"magic":  func(b []byte) { b[0] = 'G' },
		"short":  nil,
	} {
		b := slices.Clone(good)
		if edit == nil {
			b = b[:indexHeader-1]
		} else {
			edit(b)
		}
		os.WriteFile(path, b, 0o600)
		if got, err := readIndex(path); err == nil {
			t.Errorf("%s: read as an index: %+v", name, got)
		}
	}
	os.WriteFile(path, good, 0o600)
	lazy, err := readIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	lazy.add(objN(3), []int{3})
	unlock, ok, err := filelock.TryLock(path)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := lazy.save(path); err == nil {
		t.Error("saved while another process held the index")
	}
	unlock()
	if b, _ := os.ReadFile(path); !slices.Equal(b, good) {
		t.Error("the index changed while another process held it")
	}
}

// setMany leaves the entries, the largest cycle and the lookups that set,
// once per commit, leaves.
func TestSetManyAsSet(t *testing.T) {
	build := func() *index {
		ix := &index{saved: -1}
		for i := 0; i < 40; i++ {
			ix.add(objN(i%13), []int{i + 1})
		}
		return ix
	}
	objs := []gitstore.Hash{objN(2), objN(5), objN(12), objN(99)}
	cycles := [][]int{{7, 100}, nil, {3}, {41}}
	one, many := build(), build()
	for i, obj := range objs {
		if err := one.set(obj, cycles[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := many.setMany(objs, cycles); err != nil {
		t.Fatal(err)
	}
	count := func(ix *index) map[indexEntry]int {
		m := map[indexEntry]int{}
		for _, e := range ix.entries {
			m[e]++
		}
		return m
	}
	if a, b := count(many), count(one); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("setMany leaves %v, set leaves %v", a, b)
	}
	if many.max() != one.max() || many.max() != 100 {
		t.Errorf("largest cycle %d, set gives %d", many.max(), one.max())
	}
	for _, c := range []int{3, 7, 41, 100, 6} {
		a, okA, _ := many.find(c)
		b, okB, _ := one.find(c)
		if a != b || okA != okB {
			t.Errorf("find(%d): %s %v, set gives %s %v", c, a, okA, b, okB)
		}
	}
}
