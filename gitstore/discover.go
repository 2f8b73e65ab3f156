package gitstore

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// discovery is where a repository is: what git rev-parse says in Open.
type discovery struct {
	gitDir, commonDir, workTree string
	objectFormat                string
}

// discoverEnv lists the variables that change how git finds a repository;
// with any of them set, only git itself decides.
var discoverEnv = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_COMMON_DIR", "GIT_CEILING_DIRECTORIES",
	"GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY", "GIT_INDEX_FILE", "GIT_NAMESPACE",
	"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT", "GIT_TEST_ASSUME_DIFFERENT_OWNER"}

// discoverNative finds the repository of dir the way git does for the
// common case, a working tree (or one of its subdirectories, or a linked
// worktree) owned by the current user, without running git. ok is false
// for everything else, and then git rev-parse decides: a bare repository, a
// directory inside a git directory, any variable of discoverEnv, core.bare
// or core.worktree in the config, config includes, extensions other than
// worktreeConfig, or a repository format other than 0 and 1.
func discoverNative(dir string) (d discovery, ok bool) {
	for _, v := range discoverEnv {
		if os.Getenv(v) != "" {
			return d, false
		}
	}
	dev, ok := deviceOf(dir)
	if !ok {
		return d, false
	}
	for top := dir; ; {
		if looksLikeGitDir(top) {
			return d, false // bare, or inside a git directory
		}
		if dv, ok := deviceOf(top); !ok || dv != dev {
			return d, false // git stops at a file system boundary
		}
		dotgit := filepath.Join(top, ".git")
		fi, err := os.Lstat(dotgit)
		switch {
		case err == nil && fi.IsDir():
			d.gitDir = dotgit
		case err == nil && fi.Mode().IsRegular():
			data, err := os.ReadFile(dotgit)
			rest, found := bytes.CutPrefix(data, []byte("gitdir: "))
			if err != nil || !found {
				return d, false
			}
			d.gitDir = strings.TrimRight(string(rest), "\r\n")
			if !filepath.IsAbs(d.gitDir) {
				d.gitDir = filepath.Join(top, d.gitDir)
			}
		case err == nil:
			return d, false // a symlink or something stranger
		}
		if d.gitDir != "" {
			d.workTree = top
			break
		}
		parent := filepath.Dir(top)
		if parent == top {
			return d, false
		}
		top = parent
	}
	d.gitDir = filepath.Clean(d.gitDir)
	if !looksLikeGitDir(d.gitDir) && !fileExists(filepath.Join(d.gitDir, "commondir")) {
		return d, false
	}
	d.commonDir = d.gitDir
	if data, err := os.ReadFile(filepath.Join(d.gitDir, "commondir")); err == nil {
		c := strings.TrimRight(string(data), "\r\n")
		if !filepath.IsAbs(c) {
			c = filepath.Join(d.gitDir, c)
		}
		d.commonDir = filepath.Clean(c)
	}
	if !validHEAD(filepath.Join(d.gitDir, "HEAD")) || !isDir(filepath.Join(d.commonDir, "objects")) {
		return d, false // git would skip it and look further up
	}
	if !ownedByUs(d.workTree) || !ownedByUs(d.gitDir) {
		return d, false // git's safe.directory rules decide
	}
	if !plainConfig(filepath.Join(d.commonDir, "config")) {
		return d, false
	}
	if wc := filepath.Join(d.gitDir, "config.worktree"); fileExists(wc) && !plainConfig(wc) {
		return d, false
	}
	// Symlinks in the path: git prints resolved paths.
	for _, p := range []*string{&d.gitDir, &d.commonDir, &d.workTree} {
		r, err := filepath.EvalSymlinks(*p)
		if err != nil {
			return d, false
		}
		*p = r
	}
	d.objectFormat = "sha1"
	return d, true
}

// plainConfig reports whether a repository config leaves discovery to the
// defaults: no core.bare, core.worktree or include, a format version of 0
// or 1, and no extension but worktreeConfig.
func plainConfig(path string) bool {
	exists, ok := readConfig(path, func(section, key, val string, _ bool) bool {
		val = strings.ToLower(val)
		switch {
		case (section == "core" || section == "extensions") && strings.ContainsAny(val, "\"\\"):
			return false
		case section == "core" && (key == "bare" && val != "false" || key == "worktree"):
			return false
		case section == "core" && key == "repositoryformatversion" && val != "0" && val != "1":
			return false
		case section == "extensions" && key != "worktreeconfig":
			return false
		case strings.HasPrefix(section, "core ") || strings.HasPrefix(section, "extensions "):
			return false
		}
		return true
	})
	return exists && ok
}

// readConfig calls fn with each entry of a git config file: its section
// (lowercased, with any subsection), its key (lowercased) and its value
// (trimmed, with a trailing comment removed; hasVal is false for a key
// without "="; quotes and escapes are left in, for fn to refuse where they
// matter). exists is false when there is no such file; ok is false for a
// file this cannot read the way git does (an include, a broken section
// header), or when fn returns false.
func readConfig(path string, fn func(section, key, val string, hasVal bool) bool) (exists, ok bool) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return false, true
	}
	if err != nil {
		return true, false
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				return true, false
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			if strings.HasPrefix(section, "include") {
				return true, false
			}
			if line = strings.TrimSpace(line[end+1:]); line == "" {
				continue
			}
		}
		key, val, hasVal := strings.Cut(line, "=")
		val = strings.TrimSpace(val)
		if i := strings.IndexAny(val, "#;"); i >= 0 {
			val = strings.TrimSpace(val[:i])
		}
		if !fn(section, strings.ToLower(strings.TrimSpace(key)), val, hasVal) {
			return true, false
		}
	}
	return true, sc.Err() == nil
}

// validHEAD reports whether a HEAD file is one git accepts: a symbolic ref
// to refs/, or an object name.
func validHEAD(path string) bool {
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	s := strings.TrimRight(string(data), "\n")
	if rest, ok := strings.CutPrefix(s, "ref: "); ok {
		return strings.HasPrefix(rest, "refs/") && !strings.ContainsAny(rest, " \n")
	}
	_, err = ParseHash(s)
	return err == nil
}

func looksLikeGitDir(dir string) bool {
	return fileExists(filepath.Join(dir, "HEAD")) && isDir(filepath.Join(dir, "objects")) && isDir(filepath.Join(dir, "refs"))
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
