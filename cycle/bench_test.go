package cycle

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"git-evolve/gitstore"
	"git-evolve/ledger"
)

// benchRepo returns a repository with n commits and a ledger of n records
// made by bench/genrepo.sh, shared by the benchmarks of one size.
var (
	benchRepos = map[int]string{}
	benchDir   string // removed by TestMain
)

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

func benchRepo(b *testing.B, n int) string {
	b.Helper()
	if dir, ok := benchRepos[n]; ok {
		return dir
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "git-evolve-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	dir := filepath.Join(benchDir, fmt.Sprintf("repo%d", n))
	cmd := exec.Command("bash", "../bench/genrepo.sh", strconv.Itoa(n), dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("genrepo.sh: %v\n%s", err, out)
	}
	benchRepos[n] = dir
	return dir
}

func benchSizes() []int {
	if os.Getenv("BENCH_100K") != "" {
		return []int{1000, 10000, 100000}
	}
	return []int{1000, 10000}
}

// BenchmarkList reads the whole ledger, as `git evolve log --json` does.
func BenchmarkList(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := benchRepo(b, n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				repo, err := gitstore.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				l := Open(repo, time.Now)
				list, err := l.List(ListOptions{})
				if err != nil {
					b.Fatal(err)
				}
				if len(list.Entries) != n {
					b.Fatalf("listed %d records, want %d", len(list.Entries), n)
				}
				for j := range list.Entries {
					list.Entries[j].Record.Marshal()
				}
				repo.Close()
			}
		})
	}
}

// BenchmarkLines lists the ledger as `git evolve log --json` does: warm
// (the saved view is current) and cold (no saved view).
func BenchmarkLines(b *testing.B) {
	for _, n := range benchSizes() {
		for _, cold := range []bool{false, true} {
			name := fmt.Sprintf("records=%d/warm", n)
			if cold {
				name = fmt.Sprintf("records=%d/cold", n)
			}
			b.Run(name, func(b *testing.B) {
				dir := benchRepo(b, n)
				repo, err := gitstore.Open(dir)
				if err != nil {
					b.Fatal(err)
				}
				defer repo.Close()
				l := Open(repo, time.Now)
				if _, _, err := l.Lines(ListOptions{}, nil); err != nil { // warm the view
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if cold {
						b.StopTimer()
						os.Remove(l.viewPath())
						b.StartTimer()
					}
					lines, _, err := l.Lines(ListOptions{}, nil)
					if err != nil {
						b.Fatal(err)
					}
					if len(lines) != n {
						b.Fatalf("listed %d lines, want %d", len(lines), n)
					}
				}
			})
		}
	}
}

// BenchmarkRecord appends one productive cycle to a ledger of n records, as
// `git evolve record` does (the cycle index cache is warm, as it is after
// the first record in a clone).
func BenchmarkRecord(b *testing.B) {
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			dir := benchRepo(b, n)
			repo, err := gitstore.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer repo.Close()
			fresh, err := repo.RevList("main..fresh")
			if err != nil {
				b.Fatal(err)
			}
			l := Open(repo, time.Now)
			two := 2
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				rec := ledger.Record{Target: "bench", Result: ledger.Harvested, GoalsPassing: &two, GoalsTotal: &two,
					CanonicalSHA: fresh[i%len(fresh)].String()}
				if _, err := l.Record(rec); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
