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
