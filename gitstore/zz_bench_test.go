package gitstore

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

func BenchmarkWriteTreeObjects(b *testing.B) {
	dir := b.TempDir()
	if _, err := runGitCmd(dir, "", nil, "init", "-q", dir); err != nil {
		b.Fatal(err)
	}
	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		entries := []treeEntry{}
		for j := 0; j < 100; j++ {
			entries = append(entries, treeEntry{name: fmt.Sprintf("f%05d-%d.txt", j, i), hash: fakeObj(j)})
		}
		if _, err := repo.writeTree(entries); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkUntrackedScan scans a working tree of 20,000 files in 200
// directories (bench/gentree.sh) with its cache current, as a finish does
// after an earlier scan: warm, no directory read and no git process.
func BenchmarkUntrackedScan(b *testing.B) {
	dir := filepath.Join(b.TempDir(), "repo")
	if out, err := exec.Command("bash", "../bench/gentree.sh", "20000", dir).CombinedOutput(); err != nil {
		b.Fatalf("gentree.sh: %v\n%s", err, out)
	}
	old := untrackedRacySlack
	untrackedRacySlack = -time.Hour // trust the tree made just now
	defer func() { untrackedRacySlack = old }()
	repo, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer repo.Close()
	if _, ok, err := repo.scanUntracked(dir); err != nil || !ok {
		b.Fatalf("the scan: %v, %v", ok, err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, ok, err := repo.scanUntracked(dir)
		if err != nil || !ok || s.Read != 0 || s.Asked != 0 {
			b.Fatalf("the scan: %+v, %v, %v", s, ok, err)
		}
	}
}
