package mirror

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/git-evolve/git-evolve/cycle"
	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger"
)

// BenchmarkRecord records a cycle on a new commit of a 10,000-record
// ledger made by bench/genrepo.sh (as the seeds' writer does after the
// cycle's commit), with and without the history file refreshed after it,
// and the file built whole: what keeping the file costs a record.
func BenchmarkRecord(b *testing.B) {
	n := 10000
	if s := os.Getenv("BENCH_RECORDS"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := filepath.Join(b.TempDir(), "repo")
	if out, err := exec.Command("bash", "../bench/genrepo.sh", strconv.Itoa(n), dir).CombinedOutput(); err != nil {
		b.Fatalf("genrepo.sh: %v\n%s", err, out)
	}
	b.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	b.Setenv("GIT_EVOLVE_HOST", "bench")
	m := Mirror{Top: dir, StateDir: filepath.Join(dir, ".git", "evolve"), Exclude: filepath.Join(dir, ".git", "info", "exclude")}
	i := 0
	var cpu time.Duration // of the steps timed, this process's and git's it waited for
	step := func(b *testing.B, refresh, whole bool) {
		b.StopTimer()
		i++
		cmd := exec.Command("git", "commit", "-q", "--allow-empty", "-m", "bench "+strconv.Itoa(i))
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v\n%s", err, out)
		}
		if whole {
			os.Remove(m.statePath())
			os.Remove(m.Path(HistoryFile))
		}
		repo, err := gitstore.Open(dir, gitstore.ForWriting("bench"))
		if err != nil {
			b.Fatal(err)
		}
		defer repo.Close()
		l := cycle.Open(repo, time.Now)
		two := 2
		c0 := cpuTime()
		b.StartTimer()
		if _, err := l.Record(ledger.Record{Target: "bench", Result: ledger.Improved, GoalsPassing: &two, GoalsTotal: &two}); err != nil {
			b.Fatal(err)
		}
		if refresh {
			if _, err := m.Refresh(l.Ledger); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		repo.Close() // its git processes end, and are counted
		cpu += cpuTime() - c0
		b.StartTimer()
	}
	run := func(name string, refresh, whole bool) {
		b.Run(name, func(b *testing.B) {
			cpu = 0
			for range b.N {
				step(b, refresh, whole)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
		})
	}
	// the file and the ledger's caches, built once
	step(b, true, false)
	run("without", false, false)
	run("appended", true, false)
	run("whole", true, true)
}
