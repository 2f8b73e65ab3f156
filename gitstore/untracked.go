package gitstore

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The untracked scan answers what git ls-files --others --exclude-standard
// answers (the untracked files that are not ignored), and which entries of
// the index have no file in the working tree, without a git process in the
// common case and without reading every directory each time.
//
// It reads the index itself and lists each directory that holds tracked
// files. A directory's listing is kept in a cache under the git directory
// (untrackedCacheFile), keyed by the directory's own stat data: a name added
// to or removed from a directory changes its modification and change
// times, so an unchanged key means an unchanged listing, and only the
// directories whose key moved are read again. A key is kept only once it is
// older than untrackedRacySlack at the time of the read, so that a change
// in the same tick of the file system's clock cannot hide behind it (git's
// "racily clean" rule).
//
// Whether a name that is not in the index is ignored is git's own answer
// (git check-ignore, which weighs the same patterns in the same order as
// git ls-files), kept in the cache too, valid while the ignore rules are
// the same: the cache holds a digest of every file they come from (each
// .gitignore on the way, info/exclude, core.excludesFile), read here each
// time. A directory that is not ignored and not tracked is listed like the
// others, and the names in it asked about in turn; an ignored one is not
// entered, as git does not enter it.
//
// Anything the scan does not model exactly (a split or sparse index,
// skip-worktree or assume-unchanged entries, unmerged entries, a nested
// repository, a file where the index has a directory or the reverse,
// core.ignoreCase, a config file it cannot read as git does, a platform
// without the stat data it needs) makes it decline, and the caller asks
// git.

// untrackedCacheFile is the cache's name under the worktree's git directory.
const untrackedCacheFile = "evolve/untracked.cache"

// untrackedRacySlack is how old a directory's change must be, at the time
// it is read, for its listing to be kept.
var untrackedRacySlack = 2 * time.Second

// untrackedScan is what scanUntracked found.
type untrackedScan struct {
	Untracked []string // not ignored, not in the index; sorted
	Missing   []string // in the index, no file in the working tree; sorted
	Read      int      // directories read (the others' listings were the cache's)
	Asked     int      // names git was asked about (the others' answers were the cache's)
}

// dirKey is the stat data of a directory that changes when a name is added
// to it or removed from it.
type dirKey struct {
	mtime, ctime int64 // nanoseconds
	ino, dev     uint64
}

// ucDir is a directory's listing as the cache keeps it: against the
// index's names in it (ihash), the names the index lacks (cands) and the
// index's names the directory lacks (gone).
type ucDir struct {
	key   dirKey
	ihash uint64
	cands []ucName
	gone  []string
}

// ucName is a name in a directory; dir says whether it is a directory
// (gitlink, in the index, a submodule's commit).
type ucName struct {
	name    string
	dir     bool
	gitlink bool
}

// ucDecision is whether a path not in the index is ignored, as git decided.
type ucDecision struct {
	dir, ignored bool
}

// untrackedCache is the cache file's content.
type untrackedCache struct {
	rules     [32]byte // digest of the ignore rules the decisions hold under
	dirs      map[string]*ucDir
	decisions map[string]ucDecision
}

// tdir is a directory of the index: the names of its entries and of its
// subdirectories.
type tdir struct {
	names []ucName
	kinds map[string]byte // kindMap's, made when needed
}

// scanUntracked runs the untracked scan of the working tree at top; ok is
// false when it declines (see above) and git is to be asked instead.
func (r *Repo) scanUntracked(top string) (_ *untrackedScan, ok bool, err error) {
	if !statKeysAvailable || !r.gitDirsOutside(top) {
		return nil, false, nil
	}
	// These change which index git reads, or how it reads the names it is
	// given.
	for _, v := range []string{"GIT_INDEX_FILE", "GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"} {
		if os.Getenv(v) != "" {
			return nil, false, nil
		}
	}
	cfg, ok := nativeConfig(r.commonDir, r.gitDir, "core.excludesfile", "core.ignorecase", "core.precomposeunicode")
	if !ok {
		return nil, false, nil
	}
	for _, k := range []string{"core.ignorecase", "core.precomposeunicode"} {
		if on, known := gitBool(cfg[k]); on || !known {
			return nil, false, nil
		}
	}
	data, err := os.ReadFile(filepath.Join(r.gitDir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		data, err = emptyIndex, nil
	}
	if err != nil {
		return nil, false, err
	}
	entries, err := parseIndex(data)
	if err != nil {
		return nil, false, nil // git will say what is wrong with it
	}
	dirs, ok := indexDirs(entries)
	if !ok {
		return nil, false, nil
	}
	global, ok := r.globalIgnoreFiles(cfg)
	if !ok {
		return nil, false, nil
	}
	cachePath := filepath.Join(r.gitDir, filepath.FromSlash(untrackedCacheFile))
	old := readUntrackedCache(cachePath)
	s := &scanState{r: r, top: top, old: old, now: time.Now(), dirs: map[string]*ucDir{}}

	// The directories of the index, listed (from the cache where their key
	// and the index's names in them are unchanged).
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	listed := make([]*ucDir, len(names))
	present := make([]bool, len(names))
	var wg sync.WaitGroup
	var failed error
	var mu sync.Mutex
	work := make(chan int)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				l, here, err := s.list(names[i], dirs[names[i]])
				mu.Lock()
				if err != nil && failed == nil {
					failed = err
				}
				mu.Unlock()
				listed[i], present[i] = l, here
			}
		}()
	}
	for i := range names {
		work <- i
	}
	close(work)
	wg.Wait()
	if errors.Is(failed, errScanDeclined) {
		return nil, false, nil
	}
	if failed != nil {
		return nil, false, failed
	}
	out := &untrackedScan{}
	var cands []string // paths not in the index, in directories of the index
	candDir := map[string]bool{}
	ignoreFiles := map[string]bool{}
	for i, d := range names {
		if !present[i] {
			for _, n := range dirs[d].names {
				if !n.dir {
					out.Missing = append(out.Missing, joinPath(d, n.name))
				}
			}
			continue
		}
		l := listed[i]
		gitignoreGone := false
		if len(l.gone) > 0 {
			kinds := dirs[d].kindMap()
			for _, g := range l.gone {
				if kinds[g] != 'd' {
					out.Missing = append(out.Missing, joinPath(d, g))
				}
				gitignoreGone = gitignoreGone || g == ".gitignore"
			}
		}
		if !gitignoreGone && dirs[d].hasFile(".gitignore") {
			ignoreFiles[joinPath(d, ".gitignore")] = true
		}
		for _, c := range l.cands {
			p := joinPath(d, c.name)
			if c.name == ".gitignore" && !c.dir {
				ignoreFiles[p] = true
			}
			cands = append(cands, p)
			candDir[p] = c.dir
		}
	}

	// The ignore rules' files are read as they are found, before git is
	// asked about any name they rule; the decisions of the cache are taken
	// while the rules are found the same as when they were made, and all
	// asked again when they are not.
	globalRules := make([]ruleFile, 0, len(global))
	for _, f := range global {
		rf, ok := readRule("global:"+f, f)
		if !ok {
			return nil, false, nil
		}
		globalRules = append(globalRules, rf)
	}
	treeRules := make([]ruleFile, 0, len(ignoreFiles))
	for p := range ignoreFiles {
		rf, ok := readRule("tree:"+p, filepath.Join(top, filepath.FromSlash(p)))
		if !ok {
			return nil, false, nil
		}
		treeRules = append(treeRules, rf)
	}
	missing := out.Missing
	for _, useOld := range []bool{true, false} {
		out = &untrackedScan{Missing: missing}
		s.newDecisions = map[string]ucDecision{}
		rules := append([]ruleFile(nil), treeRules...)
		fromOld, ok, err := s.decide(cands, candDir, useOld, &rules, out)
		if err != nil || !ok {
			return nil, ok, err
		}
		digest := ruleDigest(globalRules, rules)
		if fromOld && digest != old.rules {
			continue // the rules changed: ask git about every name
		}
		sort.Strings(out.Untracked)
		sort.Strings(out.Missing)
		out.Read, out.Asked = s.read, s.asked
		s.save(cachePath, digest)
		return out, true, nil
	}
	return nil, false, nil
}

// decide sorts the names not in the index, cands (and the names inside
// those that are untracked directories, not ignored), into ignored and
// untracked, with the decisions of the cache when useOld says so (fromOld
// tells whether one was taken) and git check-ignore's for the others. The
// untracked files go to out; the .gitignore files found in untracked
// directories are read and added to rules.
func (s *scanState) decide(cands []string, candDir map[string]bool, useOld bool, rules *[]ruleFile, out *untrackedScan) (fromOld, ok bool, err error) {
	for len(cands) > 0 {
		var unknown []string
		for _, p := range cands {
			if d, ok := s.old.decisions[p]; useOld && ok && d.dir == candDir[p] {
				s.newDecisions[p] = d
				fromOld = true
			} else {
				unknown = append(unknown, p)
			}
		}
		for _, p := range unknown {
			if !plainPathspec(p) {
				return false, false, nil
			}
		}
		if len(unknown) > 0 {
			ignored, err := s.checkIgnore(unknown)
			if err != nil {
				return false, false, err
			}
			for i, p := range unknown {
				s.newDecisions[p] = ucDecision{dir: candDir[p], ignored: ignored[i]}
			}
		}
		// The files that are not ignored are untracked; the directories
		// that are not ignored are entered, and their names asked about.
		var next []string
		for _, p := range cands {
			d := s.newDecisions[p]
			switch {
			case d.ignored:
			case !d.dir:
				out.Untracked = append(out.Untracked, p)
			default:
				l, here, err := s.list(p, &tdir{})
				if errors.Is(err, errScanDeclined) || err == nil && !here {
					return false, false, nil // it went while it was looked at
				}
				if err != nil {
					return false, false, err
				}
				for _, c := range l.cands {
					q := joinPath(p, c.name)
					if c.name == ".gitignore" && !c.dir {
						rf, ok := readRule("tree:"+q, filepath.Join(s.top, filepath.FromSlash(q)))
						if !ok {
							return false, false, nil
						}
						*rules = append(*rules, rf)
					}
					next = append(next, q)
					candDir[q] = c.dir
				}
			}
		}
		cands = next
	}
	return fromOld, true, nil
}

// ruleFile is one file of ignore rules, named, with the digest of its
// content as it was read.
type ruleFile struct {
	name   string
	digest [32]byte
	exists bool
}

// readRule reads one file of ignore rules. ok is false when it cannot be
// read, or for a .gitignore that is not a regular file (git does not
// follow a symbolic link there).
func readRule(name, file string) (ruleFile, bool) {
	rf := ruleFile{name: name}
	if strings.HasPrefix(name, "tree:") {
		if fi, err := os.Lstat(file); err == nil && !fi.Mode().IsRegular() {
			return rf, false
		}
	}
	data, err := os.ReadFile(file)
	switch {
	case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
		return rf, true
	case err != nil:
		return rf, false
	}
	rf.exists, rf.digest = true, sha256.Sum256(data)
	return rf, true
}

// ruleDigest is the digest of a set of ignore rules.
func ruleDigest(global, tree []ruleFile) [32]byte {
	sort.Slice(tree, func(i, j int) bool { return tree[i].name < tree[j].name })
	h := sha256.New()
	h.Write([]byte("git-evolve ignore rules 1\x00"))
	for _, rf := range append(append([]ruleFile(nil), global...), tree...) {
		h.Write([]byte(rf.name))
		if rf.exists {
			h.Write([]byte{0, 1})
			h.Write(rf.digest[:])
		} else {
			h.Write([]byte{0, 0})
		}
	}
	var d [32]byte
	copy(d[:], h.Sum(nil))
	return d
}

// errScanDeclined is a working tree the scan does not model.
var errScanDeclined = errors.New("the untracked scan declines")

// scanState is one run of scanUntracked.
type scanState struct {
	r            *Repo
	top          string
	old          *untrackedCache
	now          time.Time
	mu           sync.Mutex
	dirs         map[string]*ucDir // the listings to keep
	changed      bool              // a listing differs from the cache's
	read, asked  int               // directories read, names asked about
	newDecisions map[string]ucDecision
}

// list lists directory d of the working tree against the index's names in
// it (t), from the cache when its key and those names are unchanged. here
// is false when d is not a directory.
func (s *scanState) list(d string, t *tdir) (*ucDir, bool, error) {
	abs := s.top
	if d != "" {
		abs = filepath.Join(s.top, filepath.FromSlash(d))
	}
	stat := os.Lstat
	if d == "" {
		stat = os.Stat // the top may be reached through a symbolic link
	}
	fi, err := stat(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || err == nil && !fi.IsDir() {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, errScanDeclined // unreadable: git warns and goes on, as the scan cannot
	}
	key, ok := statKey(fi)
	if !ok {
		return nil, false, errScanDeclined
	}
	ih := t.hash()
	if c := s.old.dirs[d]; c != nil && c.key == key && c.ihash == ih {
		s.keep(d, c, true, false)
		return c, true, nil
	}
	ents, err := os.ReadDir(abs)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, errScanDeclined // unreadable (see above)
	}
	s.mu.Lock()
	s.read++
	s.mu.Unlock()
	l := &ucDir{key: key, ihash: ih}
	kinds := t.kindMap()
	seen := make(map[string]bool, len(ents))
	for _, e := range ents {
		name := e.Name()
		if name == ".git" {
			if d == "" {
				continue
			}
			return nil, false, errScanDeclined // a nested repository
		}
		seen[name] = true
		isDir := e.IsDir()
		switch kinds[name] {
		case 0:
			if e.Type()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice|fs.ModeIrregular) != 0 {
				continue // a FIFO, a socket, a device: no file git knows
			}
			l.cands = append(l.cands, ucName{name: name, dir: isDir})
		case 'f':
			if isDir {
				return nil, false, errScanDeclined // a directory where the index has a file
			}
		case 'd':
			if !isDir {
				return nil, false, errScanDeclined // a file where the index has a directory
			}
		}
	}
	for _, n := range t.names {
		if !seen[n.name] {
			l.gone = append(l.gone, n.name)
		}
	}
	// Kept only when the directory's last change is old enough that no
	// later change can share its time stamp.
	racy := time.Unix(0, max(key.mtime, key.ctime)).After(s.now.Add(-untrackedRacySlack))
	s.keep(d, l, false, !racy)
	return l, true, nil
}

// keep notes the listing l of d for the cache: reused from it, or read now
// and to be stored (or not: its key is too recent to be trusted).
func (s *scanState) keep(d string, l *ucDir, reused, store bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case reused:
		s.dirs[d] = l
	case store:
		s.dirs[d] = l
		s.changed = true
	case s.old.dirs[d] != nil:
		s.changed = true // the old listing is dropped
	}
}

// plainPathspec reports whether git check-ignore, which reads the names it
// is given as pathspecs (it takes no --literal-pathspecs), reads p as the
// path it is: no glob character, no magic.
func plainPathspec(p string) bool {
	return !strings.ContainsAny(p, "*?[\\") && !strings.HasPrefix(p, ":")
}

// checkIgnore asks git check-ignore whether each path is ignored.
func (s *scanState) checkIgnore(paths []string) ([]bool, error) {
	var in bytes.Buffer
	for _, p := range paths {
		in.WriteString(p)
		in.WriteByte(0)
	}
	out, err := startGit(s.top, s.r.env, true, "check-ignore", "-z", "--stdin", "-v", "-n").finish(in.Bytes())
	var ge *GitError
	if errors.As(err, &ge) && ge.ExitCode == 1 && strings.TrimSpace(ge.Stderr) == "" {
		err = nil // none is ignored
	}
	if err != nil {
		return nil, err
	}
	fields := bytes.Split(out, []byte{0})
	if len(fields) != 4*len(paths)+1 {
		return nil, errors.New("git check-ignore: unexpected output")
	}
	ignored := make([]bool, len(paths))
	for i, p := range paths {
		pattern, path := fields[4*i+2], fields[4*i+3]
		if string(path) != p {
			return nil, errors.New("git check-ignore: unexpected output")
		}
		ignored[i] = len(pattern) > 0 && pattern[0] != '!'
	}
	s.changed = true
	s.asked += len(paths)
	return ignored, nil
}

// globalIgnoreFiles lists the ignore files outside the working tree:
// info/exclude and core.excludesFile (or its default). ok is false when
// the latter cannot be told as git tells it.
func (r *Repo) globalIgnoreFiles(cfg map[string]string) ([]string, bool) {
	files := []string{filepath.Join(r.commonDir, "info", "exclude")}
	f, set := cfg["core.excludesfile"]
	switch {
	case set && strings.HasPrefix(f, "~/"):
		home := os.Getenv("HOME")
		if home == "" {
			return nil, false
		}
		f = filepath.Join(home, f[2:])
	case set && !filepath.IsAbs(f):
		return nil, false // git reads it relative to where it runs
	case !set:
		f = xdgGitFile("ignore")
	}
	if f != "" {
		if !filepath.IsAbs(f) {
			return nil, false // a relative HOME or XDG_CONFIG_HOME: git reads it from where it runs
		}
		files = append(files, f)
	}
	return files, true
}

// save writes the cache when it changed; a cache that cannot be written
// is not an error (the next scan reads the directories again).
func (s *scanState) save(path string, rules [32]byte) {
	if !s.changed && rules == s.old.rules && len(s.dirs) == len(s.old.dirs) && len(s.newDecisions) == len(s.old.decisions) {
		return
	}
	c := &untrackedCache{rules: rules, dirs: s.dirs, decisions: s.newDecisions}
	data := c.encode()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "untracked.cache.*.tmp")
	if err != nil {
		return
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr != nil || cerr != nil || os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// indexDirs groups the index's entries by directory. ok is false for an
// index the scan does not model: unmerged, skip-worktree or
// assume-unchanged entries. The entries come sorted, so the paths under a
// directory come together and a directory is first seen once.
func indexDirs(entries []indexEntry) (map[string]*tdir, bool) {
	dirs := map[string]*tdir{"": {}}
	var last string
	lastDir := dirs[""]
	for _, e := range entries {
		if e.stage != 0 || e.skipTree || e.assumeValid {
			return nil, false
		}
		dir, name := "", e.path
		if i := strings.LastIndexByte(e.path, '/'); i >= 0 {
			dir, name = e.path[:i], e.path[i+1:]
		}
		t := lastDir
		if dir != last {
			if t = dirs[dir]; t == nil {
				t = &tdir{}
				dirs[dir] = t
				// Its parents hold it, and theirs them, up to the first
				// seen before.
				for child := dir; child != ""; {
					parent, base := "", child
					if i := strings.LastIndexByte(child, '/'); i >= 0 {
						parent, base = child[:i], child[i+1:]
					}
					pt := dirs[parent]
					fresh := pt == nil
					if fresh {
						pt = &tdir{}
						dirs[parent] = pt
					}
					pt.names = append(pt.names, ucName{name: base, dir: true})
					if !fresh {
						break
					}
					child = parent
				}
			}
			last, lastDir = dir, t
		}
		t.names = append(t.names, ucName{name: name, gitlink: e.mode == 0o160000})
	}
	return dirs, true
}

// kinds maps the names in t to what they are: 'f' a file, 'g' a gitlink,
// 'd' a directory.
func (t *tdir) kindMap() map[string]byte {
	if t.kinds == nil {
		t.kinds = make(map[string]byte, len(t.names))
		for _, n := range t.names {
			switch {
			case n.dir:
				t.kinds[n.name] = 'd'
			case n.gitlink:
				t.kinds[n.name] = 'g'
			default:
				t.kinds[n.name] = 'f'
			}
		}
	}
	return t.kinds
}

// hasFile reports whether the index has a file of that name in t.
func (t *tdir) hasFile(name string) bool {
	for _, n := range t.names {
		if n.name == name && !n.dir {
			return true
		}
	}
	return false
}

// hash is a digest of the names in t (FNV-1a), which come in the index's
// order.
func (t *tdir) hash() uint64 {
	h := uint64(14695981039346656037)
	add := func(c byte) {
		h ^= uint64(c)
		h *= 1099511628211
	}
	for _, n := range t.names {
		switch {
		case n.dir:
			add('/')
		case n.gitlink:
			add('@')
		}
		for i := 0; i < len(n.name); i++ {
			add(n.name[i])
		}
		add(0)
	}
	return h
}

func joinPath(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// gitDirsOutside reports whether the git directories are outside the
// working tree at top but for its .git (a git directory elsewhere in the
// tree would hold the scan's own cache in a directory it lists).
func (r *Repo) gitDirsOutside(top string) bool {
	for _, d := range []string{r.gitDir, r.commonDir} {
		rel, err := filepath.Rel(top, d)
		if err != nil {
			return false
		}
		rel = filepath.ToSlash(rel)
		if rel != ".." && !strings.HasPrefix(rel, "../") && rel != ".git" && !strings.HasPrefix(rel, ".git/") {
			return false
		}
	}
	return true
}

// emptyIndex is an index of no entries, as a repository without one has.
var emptyIndex = append([]byte("DIRC\x00\x00\x00\x02\x00\x00\x00\x00"), make([]byte, 20)...)
