package cycle

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/json"
	"fmt"
	"github.com/git-evolve/git-evolve/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/goals"
	"github.com/git-evolve/git-evolve/ledger"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// benchRepo returns a repository with n commits and a ledger of n records
// made by bench/genrepo.sh, shared by the benchmarks of one size.
var (
	benchRepos = map[int]string{}
	benchDir   string // removed by TestMain
)

// TestMain runs the tests with a git of their own (internal/testenv), and
// removes the benchmarks' repositories.
func TestMain(m *testing.M) {
	code := testenv.Main(m)
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

// viewPath is the ledger's saved view in the repository at dir.
func viewPath(dir string) string { return filepath.Join(dir, ".git", "evolve", "ledger.view") }

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
				list, err := l.List(store.ListOptions{})
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
				if _, _, err := l.Lines(store.ListOptions{}, nil); err != nil { // warm the view
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if cold {
						b.StopTimer()
						os.Remove(viewPath(dir))
						b.StartTimer()
					}
					lines, _, err := l.Lines(store.ListOptions{}, nil)
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

// benchTree returns a repository made by bench/gentree.sh: a working tree
// of n files in 200 directories and a GOALS.yaml, trusted.
func benchTree(b *testing.B, n int) string {
	b.Helper()
	key := -n // apart from the ledgers of benchRepo
	if dir, ok := benchRepos[key]; ok {
		return dir
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "git-evolve-bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	dir := filepath.Join(benchDir, fmt.Sprintf("tree%d", n))
	if out, err := exec.Command("bash", "../bench/gentree.sh", strconv.Itoa(n), dir).CombinedOutput(); err != nil {
		b.Fatalf("gentree.sh: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, goals.FileName))
	if err != nil {
		b.Fatal(err)
	}
	if err := goals.TrustAt(filepath.Join(dir, ".git", "evolve")).Add(goals.Digest(data), goals.FileName); err != nil {
		b.Fatal(err)
	}
	benchRepos[key] = dir
	return dir
}

func benchGit(b *testing.B, dir string, args ...string) time.Duration {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return time.Since(t0)
}

// BenchmarkFinish finishes an improved cycle that changed 10 files (5
// committed, 5 not) of a 20,000-file working tree, as `git evolve cycle
// finish` does. Beside ns/op it reports the finish's overhead (its time less
// its gate's), its substantive delta, and git diff --name-only <start> on the
// same tree measured just before: delta/git-diff is their ratio.
func BenchmarkFinish(b *testing.B) {
	dir := benchTree(b, 20000)
	repo, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	l := Open(repo, time.Now)
	data, err := os.ReadFile(filepath.Join(dir, goals.FileName))
	if err != nil {
		b.Fatal(err)
	}
	f, err := goals.Parse(goals.FileName, data)
	if err != nil {
		b.Fatal(err)
	}
	before, _ := json.Marshal(goals.Measure(context.Background(), f, goals.Options{Dir: dir}))
	var delta, gate, diff time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, err := l.StartCycle(StartOptions{Target: "ok", Era: f.Era, GoalsFile: data, Before: before})
		if err != nil {
			b.Fatal(err)
		}
		for k := 0; k < 10; k++ {
			p := filepath.Join(dir, "src", fmt.Sprintf("d%03d", k), fmt.Sprintf("f%05d.txt", k))
			fh, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				b.Fatal(err)
			}
			fmt.Fprintf(fh, "run %d\n", i)
			fh.Close()
			if k == 4 {
				benchGit(b, dir, "commit", "-q", "-am", "cycle work")
			}
		}
		benchGit(b, dir, "status", "--porcelain") // refresh the index, as an agent's git commands would
		diff += benchGit(b, dir, "diff", "--name-only", c.Start, "--", ":!.agents/**")
		b.StartTimer()
		res, err := l.Finish(context.Background(), FinishOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if res.Result != ledger.Improved {
			b.Fatalf("the cycle is %s", res.Result)
		}
		delta += res.DeltaTime
		gate += res.GateTime
	}
	b.StopTimer()
	n := float64(b.N)
	perOp := float64(b.Elapsed().Nanoseconds()) / n / 1e6
	b.ReportMetric(perOp-float64(gate.Nanoseconds())/n/1e6, "overhead-ms")
	b.ReportMetric(float64(delta.Nanoseconds())/n/1e6, "delta-ms")
	b.ReportMetric(float64(diff.Nanoseconds())/n/1e6, "git-diff-ms")
	b.ReportMetric(float64(delta)/float64(diff), "delta/git-diff")
}

// copiesRepo returns a repository whose ledger holds one record copied to
// k commits (as a rewrite tool or relink leaves it: the largest cycle on
// each, in a notes tree fanned out as git writes it), the view saved, and
// a commit to record the next cycle on; and the view's bytes, to put back
// between records.
func copiesRepo(b *testing.B, k int) (dir string, next gitstore.Hash, saved []byte) {
	b.Helper()
	dir = b.TempDir()
	benchGit(b, dir, "init", "-q", ".")
	benchGit(b, dir, "commit", "-q", "--allow-empty", "-m", "base")
	repo, err := gitstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	l := Open(repo, time.Now)
	one := 1
	res, err := l.Record(ledger.Record{Target: "t", Result: ledger.Improved, GoalsPassing: &one, GoalsTotal: &one})
	if err != nil {
		b.Fatal(err)
	}
	line := append(res.Entry.Record.Marshal(), '\n')
	var in bytes.Buffer
	fmt.Fprintf(&in, "blob\nmark :1\ndata %d\n%s\ncommit %s\ncommitter A <a@b> 1700000000 +0000\ndata 7\ncopies\nfrom %s^0\n",
		len(line), line, store.NotesRef, store.NotesRef)
	for i := 0; i < k; i++ {
		name := fmt.Sprintf("%040x", sha1.Sum([]byte(strconv.Itoa(i))))
		fmt.Fprintf(&in, "M 100644 :1 %s/%s\n", name[:2], name[2:])
	}
	in.WriteString("\n")
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir, cmd.Stdin = dir, &in
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	benchGit(b, dir, "commit", "-q", "--allow-empty", "-m", "next")
	hs, err := repo.ResolveCommits("HEAD")
	if err != nil {
		b.Fatal(err)
	}
	if _, _, err := l.Lines(store.ListOptions{}, nil); err != nil { // the view, saved
		b.Fatal(err)
	}
	if saved, err = os.ReadFile(viewPath(dir)); err != nil {
		b.Fatal(err)
	}
	return dir, hs[0], saved
}

// BenchmarkRecordCopies records the next cycle on a ledger whose largest
// cycle is one record copied to k commits, as `git evolve record` does
// with the view saved: past historyNotes copies the history does not
// answer, and the cost grows with k by the read of the view.
func BenchmarkRecordCopies(b *testing.B) {
	sizes := []int{1000, 8000, 32000}
	for _, k := range sizes {
		b.Run(fmt.Sprintf("copies=%d", k), func(b *testing.B) {
			dir, next, saved := copiesRepo(b, k)
			repo, err := gitstore.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			defer repo.Close()
			tip, _, err := repo.RefHash(store.NotesRef)
			if err != nil {
				b.Fatal(err)
			}
			l := Open(repo, time.Now)
			two := 2
			// The machine is shared: beside the time, the CPU this process
			// spent (git's processes apart), which the others' load
			// changes less.
			var cpu time.Duration
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c0 := processCPU()
				res, err := l.Record(ledger.Record{Target: "t", Result: ledger.Improved, GoalsPassing: &two, GoalsTotal: &two,
					CanonicalSHA: next.String()})
				cpu += processCPU() - c0
				if err != nil {
					b.Fatal(err)
				}
				if res.Entry.Record.Cycle != 2 || res.Entry.Record.ExtraString("prev") == "" {
					b.Fatalf("recorded %s", res.Entry.Record.Marshal())
				}
				b.StopTimer()
				benchGit(b, dir, "update-ref", store.NotesRef, tip.String())
				if err := os.WriteFile(viewPath(dir), saved, 0o600); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}
