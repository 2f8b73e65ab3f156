package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// ConfigGetAll returns every value of a multi-valued config key as git
// resolves it (all config files, includes followed), from the config read
// once a process (Config). The key is as git config takes it: section and
// name in any case, a subsection as it is. A missing key has no values.
func (r *Repo) ConfigGetAll(key string) ([]string, error) {
	if !validKey(key) {
		return nil, fmt.Errorf("invalid config key %q: a section and a name are needed, the name a letter then letters, digits and -", key)
	}
	r.readConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	var out []string
	for _, v := range r.config.raw[canonicalKey(key)] {
		if v == valueless {
			v = "" // as git config --get-all prints a key without a value
		}
		out = append(out, v)
	}
	return out, r.config.err
}

// validKey says whether git config takes key: a section, an optional
// subsection and a name that starts with a letter and holds only letters,
// digits and '-'.
func validKey(key string) bool {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first <= 0 || last == len(key)-1 {
		return false
	}
	for _, c := range key[:first] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	for i, c := range key[last+1:] {
		alpha := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alpha && (i == 0 || !(c >= '0' && c <= '9' || c == '-')) {
			return false
		}
	}
	return !strings.ContainsRune(key[first:last], '\n')
}

// canonicalKey is key as git config --list prints it: the section and the
// name lower case, a subsection as it is.
func canonicalKey(key string) string {
	first, last := strings.IndexByte(key, '.'), strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key)
	}
	return strings.ToLower(key[:first]) + key[first:last] + strings.ToLower(key[last:])
}

// ConfigSection returns every key under section (as "evolve" gives
// evolve.*, subsections too) with its values, as git resolves them, from
// the config read once a process (Config). Keys are as git prints them:
// section and name lower case.
func (r *Repo) ConfigSection(section string) (map[string][]string, error) {
	r.readConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	prefix := strings.ToLower(section) + "."
	vals := map[string][]string{}
	for k, vs := range r.config.all {
		if strings.HasPrefix(k, prefix) {
			vals[k] = slices.Clone(vs)
		}
	}
	return vals, r.config.err
}

// ConfigAdd adds a value to a multi-valued key in the repository's config
// file, keeping the values already there.
func (r *Repo) ConfigAdd(key, value string) error {
	_, err := r.git(context.Background(), nil, "config", "--local", "--add", key, value)
	r.config.mu.Lock()
	r.config.done, r.config.proc = false, nil // read again when next asked
	r.config.remotesDone = false
	r.config.writes++
	r.config.mu.Unlock()
	return err
}

// ConfigSet sets a single-valued key in the repository's config file,
// replacing the value there (git config --local key value).
func (r *Repo) ConfigSet(key, value string) error {
	_, err := r.git(context.Background(), nil, "config", "--local", key, value)
	r.config.mu.Lock()
	r.config.done, r.config.proc = false, nil // read again when next asked
	r.config.remotesDone = false
	r.config.writes++
	r.config.mu.Unlock()
	return err
}

// Remotes returns the names of the repository's remotes, as git remote
// lists them (the config's remote.<name>.* subsections and the old
// .git/remotes and .git/branches files). git is asked once a process, as
// the config is read once (Config); a config written through this Repo
// asks again.
func (r *Repo) Remotes() ([]string, error) {
	r.config.mu.Lock()
	if r.config.remotesDone {
		defer r.config.mu.Unlock()
		return slices.Clone(r.config.remotes), nil
	}
	gen := r.config.writes
	r.config.mu.Unlock()
	out, err := r.git(context.Background(), nil, "remote")
	if err != nil {
		return nil, err
	}
	remotes := strings.Fields(string(out))
	r.config.mu.Lock()
	if r.config.writes == gen { // no config write while git answered
		r.config.remotes, r.config.remotesDone = remotes, true
	}
	r.config.mu.Unlock()
	return slices.Clone(remotes), nil
}

// IsRemote reports whether name is one of the repository's remotes, as
// Remotes lists them. A remote set in the config is known from the config
// read once (Config) with no git run for it: git remote lists every
// remote.<name>.* subsection. For any other name (a URL, a remote of the
// old .git/remotes files) git remote answers.
func (r *Repo) IsRemote(name string) (bool, error) {
	r.readConfig()
	r.config.mu.Lock()
	prefix := "remote." + name + "."
	found := false
	for k := range r.config.all {
		if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], ".") {
			found = true
			break
		}
	}
	r.config.mu.Unlock()
	if found {
		return true, nil
	}
	remotes, err := r.Remotes()
	return slices.Contains(remotes, name), err
}

// GitPath resolves a path inside the git directory the way git does (git
// rev-parse --git-path), so that core.hooksPath and the like are honoured
// (a relative core.hooksPath from the top of the working tree, where git
// runs hooks).
// The hooks directory is known without asking git when the config sets no
// core.hooksPath: git puts it in the common git directory.
func (r *Repo) GitPath(name string) (string, error) {
	if name == "hooks" && r.commonDir != "" && filepath.IsAbs(r.commonDir) {
		if _, set, err := r.Config("core.hookspath"); err == nil && !set {
			return filepath.Join(r.commonDir, "hooks"), nil
		}
	}
	// git runs from the top of the working tree, as it runs hooks: with
	// GIT_DIR set, a relative core.hooksPath is taken from where git runs.
	dir := r.dir
	if _, set := os.LookupEnv("GIT_WORK_TREE"); r.workTree != "" && !set {
		dir = r.workTree // (a GIT_WORK_TREE given is the caller's, from where it ran)
	}
	out, err := startGit(dir, r.env, false, "rev-parse", "--path-format=absolute", "--git-path", name).finish(nil)
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
}

// ColorBool asks git whether output of the color slot key (as
// "color.evolve", falling back to color.ui) is coloured, as git decides it
// for its own commands (git config --get-colorbool); tty says whether the
// output goes to a terminal. It needs no repository: dir is where git runs.
func ColorBool(dir, key string, tty bool) bool {
	out, err := startGit(dir, nil, false, "config", "--get-colorbool", key, strconv.FormatBool(tty)).finish(nil)
	return err == nil && strings.TrimSpace(string(out)) == "true" // given whether it is a terminal, git prints true or false
}

// Pager is the pager git would start for its own output here (git var
// GIT_PAGER: GIT_PAGER, core.pager, PAGER, else less), "" when git cannot
// say. git --no-pager gives its children GIT_PAGER=cat.
func Pager(dir string) string {
	out, err := startGit(dir, nil, false, "var", "GIT_PAGER").finish(nil)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// configCache is git's whole config as git config -z --list gives it (every
// file, includes followed, -c and GIT_CONFIG_* too), read once a process:
// the settings git-evolve reads come from git, never from its own reading
// of the files.
type configCache struct {
	mu   sync.Mutex
	proc *proc
	done bool
	vals map[string]string   // the last value of each key, by its name as git prints it
	all  map[string][]string // every value of each key, in order ("true" for a key without one)
	raw  map[string][]string // the same, "" for a key without a value (git config --get-all)
	err  error

	remotes     []string // git remote's answer (Remotes)
	remotesDone bool
	writes      int // config writes made through the Repo, so that an answer git gave before one is not kept
}

// PrefetchConfig starts reading the config, so that a later Config does
// not wait for git to start.
func (r *Repo) PrefetchConfig() {
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	if r.config.proc == nil && !r.config.done {
		r.config.proc = startGit(r.dir, r.env, false, "config", "-z", "--list")
	}
}

// Config returns the value git resolves for key (section and name in lower
// case, as git prints them), whether it is set, and an error when git could
// not read the config. A key given without "=" is "true", as git reads it.
func (r *Repo) Config(key string) (string, bool, error) {
	r.readConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	v, ok := r.config.vals[key]
	return v, ok, r.config.err
}

// ConfigValues returns every value git has for key (as Config names it),
// in order, from the config read once (Config).
func (r *Repo) ConfigValues(key string) ([]string, error) {
	r.readConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	return r.config.all[key], r.config.err
}

func (r *Repo) readConfig() {
	r.PrefetchConfig()
	r.config.mu.Lock()
	defer r.config.mu.Unlock()
	if !r.config.done {
		out, err := r.config.proc.finish(nil)
		r.config.proc, r.config.done = nil, true
		var ge *GitError
		if errors.As(err, &ge) && ge.ExitCode == 1 && len(out) == 0 {
			err = nil // no config at all
		}
		r.config.raw, r.config.err = parseConfigList(out), err
		r.config.all = map[string][]string{}
		for k, vs := range r.config.raw {
			for _, v := range vs {
				if v == valueless {
					v = "true"
				}
				r.config.all[k] = append(r.config.all[k], v)
			}
		}
		r.config.vals = map[string]string{}
		for k, vs := range r.config.all {
			r.config.vals[k] = vs[len(vs)-1]
		}
	}
}

// ParseConfigFile returns the settings of a config file's content (data),
// as git config --list --file reads them: by key (section and name in
// lower case, a subsection as it is), each key's values in order, a key
// given without a value as "" (as git config --get-all prints it). Includes
// are not followed. Content git cannot read returns a *GitError saying
// where.
func (r *Repo) ParseConfigFile(data []byte) (map[string][]string, error) {
	out, err := startGit(r.dir, r.env, true, "config", "-z", "--list", "--no-includes", "--file", "-").finish(data)
	if err != nil {
		return nil, err
	}
	vals := parseConfigList(out)
	for k, vs := range vals {
		for i, v := range vs {
			if v == valueless {
				vs[i] = ""
			}
		}
		vals[k] = vs
	}
	return vals, nil
}

// parseConfigList reads git config -z --list: "key\nvalue" or "key" (no
// value: given as valueless) entries, each ended by NUL, every value of a
// key in order.
func parseConfigList(out []byte) map[string][]string {
	vals := map[string][]string{}
	for _, e := range bytes.Split(out, []byte{0}) {
		if len(e) == 0 {
			continue
		}
		k, v, hasVal := bytes.Cut(e, []byte{'\n'})
		val := string(v)
		if !hasVal {
			val = valueless
		}
		vals[string(k)] = append(vals[string(k)], val)
	}
	return vals
}

// valueless stands for the value of a key given without "=" in
// parseConfigList's answer: a NUL, which no value can hold.
const valueless = "\x00"

// configBool reads a config boolean as git does: ok is false for a value
// that is neither a boolean word nor an integer (git refuses it).
func configBool(v string) (b, ok bool) {
	switch strings.ToLower(v) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off", "":
		return false, true
	}
	n, err := strconv.ParseInt(v, 0, 64)
	return n != 0, err == nil
}

// ConfigBool is a boolean config key (a section and a name, no
// subsection) as git reads one: true, yes, on, an integer not 0, and their
// opposites; a key without a value is true. set is false when the key is
// not set. It reads the config this process read once (Config).
func (r *Repo) ConfigBool(key string) (val, set bool, err error) {
	v, ok, err := r.Config(strings.ToLower(key))
	if err != nil || !ok {
		return false, false, err
	}
	b, valid := configBool(v)
	if !valid {
		return false, true, fmt.Errorf("bad boolean config value %q for %s", v, key)
	}
	return b, true, nil
}
