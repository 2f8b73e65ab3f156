package gitstore

import (
	"fmt"
	"testing"
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
