package setup

import (
	"bytes"
	"embed"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/git-evolve/git-evolve/gitstore"
)

// shims are the hooks init installs: thin scripts that call git-evolve hook
// <name> when git-evolve is on PATH (the logic is Go, and tested). They run
// git-evolve itself, not git evolve: git's dispatch to it (git starts,
// reads its config, finds git-evolve and runs it) costs every commit and
// push about 8 ms more. The same files are in .githooks/; a test keeps
// them equal.
//
//go:embed hooks/commit-msg hooks/prepare-commit-msg hooks/pre-push
var shims embed.FS

// HookNames are the hooks init installs, in order.
var HookNames = []string{"commit-msg", "prepare-commit-msg", "pre-push"}

// Chained is the suffix a hook the user already had is kept under: the shim
// runs it first, with the same arguments and input.
const Chained = ".pre-evolve"

// shim returns the shim of a hook.
func shim(name string) []byte {
	data, err := shims.ReadFile("hooks/" + name)
	if err != nil {
		panic(err) // embedded
	}
	return data
}

// isShim reports whether a hook file is one of git-evolve's (this version's
// or an older one).
func isShim(name string, data []byte) bool {
	return bytes.Contains(data, []byte("git-evolve "+name+" hook"))
}

// HookChange is what InstallHooks did with one hook.
type HookChange struct {
	Name string
	Path string // the hook installed, or the user's hook left alone
	// Chained is where the user's hook was kept (Path + Chained) when the
	// shim now runs it first.
	Chained string
	// Updated is true when an older shim of git-evolve's was replaced.
	Updated bool
	// Manager names the hook manager whose place the hook was written to
	// (husky, lefthook, pre-commit), so that its reinstall keeps it.
	Manager string
	// Advice, when set, says what the user may do themselves: git-evolve
	// does not move or edit a hook that git tracks in the repository.
	Advice string
}

// HookLine is what a hook of the user's can run to do what the shim does.
func HookLine(name string) string {
	switch name {
	case "pre-push":
		return `command -v git-evolve >/dev/null 2>&1 && git-evolve hook pre-push "$@"   (it reads the pushed refs on its input)`
	case "prepare-commit-msg":
		return `command -v git-evolve >/dev/null 2>&1 && git-evolve hook prepare-commit-msg "$@"`
	}
	return `command -v git-evolve >/dev/null 2>&1 && git-evolve hook commit-msg "$1"`
}

// InstallHooks installs the shims where git runs hooks (the git directory's
// hooks/, or the directory core.hooksPath names). A hook the user already
// has is kept, renamed with the Chained suffix, and run first by the shim;
// a hook file git tracks in the repository is never moved or edited (the
// advice says what to add). An older shim of git-evolve's is brought up to
// date. Where a hook manager would rewrite them, the hooks go where it runs
// them after its own reinstall (managers.go). Installing again changes
// nothing.
func InstallHooks(repo *gitstore.Repo) ([]HookChange, error) {
	dir, err := repo.GitPath("hooks")
	if err != nil {
		return nil, err
	}
	top, _ := repo.WorkTree()
	var out []HookChange
	var lefthookRuns map[string]bool
	switch detect(top, dir) {
	case husky:
		out, err := installHusky(repo, top)
		if err != nil {
			return out, err
		}
		return out, expectHooks(repo)
	case lefthook:
		if lefthookRuns, out, err = installLefthook(repo, top); err != nil {
			return out, err
		}
	}
	// A hooks directory git tracks (core.hooksPath naming one in the
	// repository, as hook managers do) is the team's: nothing is written
	// there, and the advice says what to add and commit.
	shared := tracked(repo, dir)
	for _, name := range HookNames {
		if shared {
			if ch := adviseShared(dir, name); ch != nil {
				out = append(out, *ch)
			}
			continue
		}
		current, _ := os.ReadFile(filepath.Join(dir, name))
		if lefthookRuns[name] && isLefthooks(current) {
			continue // lefthook's hook runs git-evolve's command from its configuration
		}
		if isPreCommits(current) {
			ch, ok, err := installUnderPreCommit(dir, name)
			if err != nil {
				return out, err
			}
			if ch != nil {
				out = append(out, *ch)
			}
			if ok {
				continue
			}
		}
		ch, err := installHook(repo, dir, name)
		if err != nil {
			return out, err
		}
		if ch != nil {
			out = append(out, *ch)
		}
	}
	return out, expectHooks(repo)
}

// expectHooks sets HooksKey once a hook of git-evolve's is where git runs
// it: from then on one that goes missing is told. Where init could only
// advise (a hooks directory git tracks), nothing is expected of it.
func expectHooks(repo *gitstore.Repo) error {
	have, err := repo.ConfigGetAll(HooksKey)
	if err != nil || slices.Contains(have, "true") {
		return err
	}
	if missing, err := missingHooks(repo); err != nil || len(missing) == len(HookNames) {
		return err
	}
	return repo.ConfigAdd(HooksKey, "true")
}

func installHook(repo *gitstore.Repo, dir, name string) (*HookChange, error) {
	path := filepath.Join(dir, name)
	want := shim(name)
	old, err := os.ReadFile(path)
	switch {
	case err == nil && bytes.Equal(old, want):
		return nil, nil
	case err == nil && isShim(name, old):
		if err := os.WriteFile(path, want, 0o755); err != nil {
			return nil, err
		}
		return &HookChange{Name: name, Path: path, Updated: true}, nil
	case err == nil:
		if tracked(repo, path) {
			return &HookChange{Name: name, Path: path, Advice: "your " + name + " hook " + path +
				" is tracked in the repository, and git-evolve does not edit it: to get git-evolve's " + name + " hook, add this line to it: " + HookLine(name)}, nil
		}
		chained := path + Chained
		if _, err := os.Lstat(chained); err == nil {
			return &HookChange{Name: name, Path: path, Advice: chained + " exists already, so your " + name +
				" hook cannot be kept there: to get git-evolve's " + name + " hook, add this line to it: " + HookLine(name)}, nil
		}
		if err := os.Rename(path, chained); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, want, 0o755); err != nil {
			os.Rename(chained, path) // put the user's hook back
			return nil, err
		}
		return &HookChange{Name: name, Path: path, Chained: chained}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(path, want, 0o755); err != nil {
		return nil, err
	}
	return &HookChange{Name: name, Path: path}, nil
}

// adviseShared is the advice for hook name in a hooks directory git tracks:
// nothing when the hook already runs git-evolve's.
func adviseShared(dir, name string) *HookChange {
	path := filepath.Join(dir, name)
	old, err := os.ReadFile(path)
	if err == nil && (isShim(name, old) || bytes.Contains(old, []byte("git-evolve hook "+name)) || bytes.Contains(old, []byte("git evolve hook "+name))) {
		return nil
	}
	what := "add this line to it"
	if err != nil {
		what = "create it with this line (executable)"
	}
	return &HookChange{Name: name, Path: path, Advice: "the hooks directory " + dir + " is tracked in the repository, and git-evolve writes nothing there: to get git-evolve's " +
		name + " hook, " + what + ", and commit it: " + HookLine(name)}
}

// tracked reports whether git tracks path (a file, or files under a
// directory) in the repository's working tree.
func tracked(repo *gitstore.Repo, path string) bool {
	top, err := repo.WorkTree()
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(top, path)
	if err != nil || strings.HasPrefix(rel, "..") {
		return false
	}
	ok, err := repo.Tracked(filepath.ToSlash(rel))
	return err == nil && ok
}
