package audit

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

// randomSums are n summaries drawn from small sets, so that many compare
// equal on every field sumOrder reads; Digest tells equal ones apart.
func randomSums(r *rand.Rand, n int) []recSum {
	out := make([]recSum, n)
	for i := range out {
		var h gitstore.Hash
		h[0], h[19] = byte(r.IntN(3)), byte(r.IntN(2))
		out[i] = recSum{Commit: h, Cycle: r.IntN(4), Timestamp: strconv.Itoa(r.IntN(2)), ID: strconv.Itoa(r.IntN(3)),
			Digest: strconv.Itoa(i)}
	}
	return out
}

// TestSortSums: sortSums, which moves each summary once, orders them as a
// stable sort in sumOrder does.
func TestSortSums(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 10, 100, 1000} {
		for range 20 {
			got := randomSums(r, n)
			want := slices.Clone(got)
			slices.SortStableFunc(want, sumOrder)
			sortSums(got)
			if !slices.Equal(got, want) {
				t.Fatalf("%d summaries: sortSums differs from a stable sort", n)
			}
		}
	}
}

// TestMergeSums: merging new summaries into kept ones, in place when the
// slice has room and into a new one when not, gives what a stable sort of
// the kept ones followed by the new ones gives.
func TestMergeSums(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 5, 50, 500} {
		for _, k := range []int{0, 1, 3, 40} {
			for _, room := range []int{0, k / 2, k, k + 10} {
				a := randomSums(r, n)
				slices.SortStableFunc(a, sumOrder)
				b := randomSums(r, k)
				for i := range b {
					b[i].Digest = "new " + b[i].Digest
				}
				want := append(slices.Clone(a), b...)
				slices.SortStableFunc(want, sumOrder)
				kept := make([]recSum, n, n+room)
				copy(kept, a)
				if got := mergeSums(kept, slices.Clone(b)); !slices.Equal(got, want) {
					t.Fatalf("%d kept, %d new, room for %d: the merge differs from a stable sort", n, k, room)
				}
			}
		}
	}
}

// TestSumIndex: the index gives each key's summaries in sum order, its
// first, and each key once, in the order of the first summaries; a record
// with no id is known by its text.
func TestSumIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ls := &ledgerSums{Sums: randomSums(r, 500)}
	for i := range ls.Sums {
		if i%7 == 0 {
			ls.Sums[i].ID = "" // known by its digest
		}
	}
	ls.sort()
	x := ls.byKey()
	want := map[string][]*recSum{}
	var order []string
	for i := range ls.Sums {
		k := ls.Sums[i].key()
		if _, ok := want[k]; !ok {
			order = append(order, k)
		}
		want[k] = append(want[k], &ls.Sums[i])
		if x.isFirst(i) != (want[k][0] == &ls.Sums[i]) {
			t.Fatalf("isFirst(%d) = %v", i, x.isFirst(i))
		}
	}
	if x.keys() != len(want) {
		t.Fatalf("%d keys, want %d", x.keys(), len(want))
	}
	var got []string
	x.each(func(es []*recSum) {
		k := es[0].key()
		got = append(got, k)
		if !slices.Equal(es, want[k]) {
			t.Errorf("each gives %d summaries of %s, want %d", len(es), k, len(want[k]))
		}
	})
	if !slices.Equal(got, order) {
		t.Errorf("each gives the keys in another order")
	}
	for k, es := range want {
		if !slices.Equal(x.of(k), es) {
			t.Errorf("of(%s) differs", k)
		}
		if f, ok := x.firstOf(k); !ok || f != es[0] {
			t.Errorf("firstOf(%s) differs", k)
		}
	}
	if x.of("none") != nil {
		t.Error("of a key that is not there is not nil")
	}
	if _, ok := x.firstOf("none"); ok {
		t.Error("firstOf a key that is not there")
	}
}
