package gitstore

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// treeSpec is a commit's full tree: path -> "mode content" ("160000" takes an
// object name as content).
type treeSpec map[string]string

func fastImportTree(b *strings.Builder, branch string, n int, files treeSpec) {
	msg := fmt.Sprintf("%s\n", branch)
	fmt.Fprintf(b, "commit refs/heads/%s\ncommitter %s <%s> %d +0000\ndata %d\n%sdeleteall\n",
		branch, testCommitterName, testCommitterEmail, 1700000000+n, len(msg), msg)
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		mode, content, _ := strings.Cut(files[p], " ")
		if mode == "160000" {
			fmt.Fprintf(b, "M 160000 %s %s\n", content, p)
			continue
		}
		fmt.Fprintf(b, "M %s inline %s\ndata %d\n%s\n", mode, p, len(content), content)
	}
}

func TestChangedPaths(t *testing.T) {
	sub1, sub2 := fakeObj(1).String(), fakeObj(2).String()
	specs := []struct {
		branch string
		files  treeSpec
	}{
		{"a", treeSpec{
			"a.txt": "100644 a", "b.txt": "100644 b", "dir/c.txt": "100644 c", "dir/sub/d.txt": "100644 d",
			"script.sh": "100644 #!/bin/sh", "x": "100644 x", "keep/e.txt": "100644 e", "gone/g.txt": "100644 g",
			"gone/h/i.txt": "100644 i", "a-b": "100644 ab", "a.b/j.txt": "100644 j", "link": "120000 a.txt",
			"module": "160000 " + sub1,
		}},
		{"b", treeSpec{
			"a.txt": "100644 a changed", "dir/c.txt": "100644 c", "dir/sub/d.txt": "100644 d changed",
			"dir/sub/deeper/f.txt": "100644 f", "script.sh": "100755 #!/bin/sh", "x/y.txt": "100644 y",
			"keep/e.txt": "100644 e", "a-b": "100644 ab", "a.b/j.txt": "100644 j", "link": "120000 b.txt",
			"new.txt": "100644 new", "module": "160000 " + sub2,
		}},
		{"c", treeSpec{
			"a.txt": "100644 a changed", "dir/c.txt": "100644 c", "dir/sub": "100644 now a file",
			"script.sh": "100644 #!/bin/sh", "x": "100644 x", "keep/e.txt": "100644 e",
			"a-b/k.txt": "100644 k", "a.b/j.txt": "100644 j", "link": "100644 b.txt", "new.txt": "100644 new",
		}},
		{"empty", treeSpec{}},
	}
	r := newRepo(t)
	var stream strings.Builder
	for i, s := range specs {
		fastImportTree(&stream, s.branch, i, s.files)
	}
	r.gitIn(stream.String(), "fast-import", "--quiet")
	commit := map[string]Hash{}
	for _, s := range specs {
		commit[s.branch] = r.hash("rev-parse", "refs/heads/"+s.branch)
	}
	setEnv(t)
	repo := r.open()

	// Premise: the mode-only change is a change for git too.
	if !strings.Contains(r.git("diff", "--no-renames", "--name-only", "a", "b"), "script.sh\n") {
		t.Fatal("premise: git diff does not list the mode change")
	}
	for _, p := range [][2]string{
		{"a", "b"}, {"b", "a"}, {"a", "c"}, {"c", "a"}, {"b", "c"}, {"c", "b"},
		{"a", "a"}, {"empty", "a"}, {"a", "empty"}, {"empty", "empty"},
	} {
		t.Run(p[0]+"-"+p[1], func(t *testing.T) {
			got, err := repo.ChangedPaths(commit[p[0]], commit[p[1]])
			if err != nil {
				t.Fatalf("ChangedPaths: %v", err)
			}
			want := strings.Fields(r.git("diff", "--no-renames", "--name-only", p[0], p[1]))
			sorted := append([]string(nil), got...)
			sort.Strings(sorted)
			sort.Strings(want)
			if strings.Join(sorted, "\n") != strings.Join(want, "\n") {
				t.Errorf("ChangedPaths:\n  %s\ngit diff --name-only:\n  %s", strings.Join(sorted, "\n  "), strings.Join(want, "\n  "))
			}
		})
	}

	t.Run("missing commit", func(t *testing.T) {
		if _, err := repo.ChangedPaths(commit["a"], fakeObj(9)); !errors.Is(err, ErrObjectNotFound) {
			t.Errorf("ChangedPaths to a missing commit = %v, want ErrObjectNotFound", err)
		}
	})
	t.Run("trees", func(t *testing.T) {
		tree := r.hash("rev-parse", "a^{tree}")
		fromTree, err := repo.ChangedPaths(tree, commit["b"])
		fromCommit, err2 := repo.ChangedPaths(commit["a"], commit["b"])
		if err != nil || err2 != nil || strings.Join(fromTree, " ") != strings.Join(fromCommit, " ") {
			t.Errorf("ChangedPaths from a's tree = %v, %v; from a = %v, %v", fromTree, err, fromCommit, err2)
		}
	})
	t.Run("not a commit or a tree", func(t *testing.T) {
		blob := r.hash("rev-parse", "a:a.txt")
		if _, err := repo.ChangedPaths(blob, commit["b"]); err == nil {
			t.Error("ChangedPaths from a blob succeeded")
		}
	})
}
