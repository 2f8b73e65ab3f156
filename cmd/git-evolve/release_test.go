package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"

	"go.yaml.in/yaml/v3"
)

// The release configuration builds what the README promises (git-evolve
// and the MCP server for linux, darwin and windows, amd64 and arm64),
// stamps the version, puts the manual pages and completion scripts the
// binary makes into every archive, installs them where man and the shells
// look in the deb and rpm packages and the Homebrew cask, and a pushed
// tag runs it.
func TestReleaseConfig(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Before struct{ Hooks []string }
		Builds []struct {
			ID      string
			Main    string
			Goos    []string
			Goarch  []string
			Ldflags []string
		}
		Archives []struct {
			IDs   []string
			Files []any
		}
		Nfpms []struct {
			IDs      []string
			Formats  []string
			Bindir   string
			Contents []struct{ Src, Dst string }
		}
		Casks []struct {
			Binaries    []string
			Manpages    []string
			Completions map[string]string
		} `yaml:"homebrew_casks"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	mains := map[string]bool{}
	for _, b := range cfg.Builds {
		mains[b.Main] = true
		for _, os := range []string{"linux", "darwin", "windows"} {
			if !slices.Contains(b.Goos, os) {
				t.Errorf("%s: no %s build", b.ID, os)
			}
		}
		for _, arch := range []string{"amd64", "arm64"} {
			if !slices.Contains(b.Goarch, arch) {
				t.Errorf("%s: no %s build", b.ID, arch)
			}
		}
		if !strings.Contains(strings.Join(b.Ldflags, " "), "-X main.version=") {
			t.Errorf("%s: the release version is not stamped into main.version", b.ID)
		}
	}
	if len(cfg.Builds) != 2 || !mains["./cmd/git-evolve"] || !mains["./cmd/git-evolve-mcp"] {
		t.Fatalf("builds: %+v", cfg.Builds)
	}
	hooks := strings.Join(cfg.Before.Hooks, "\n")
	for _, want := range []string{"install-man dist-extra/man/man1", "completion $s"} {
		if !strings.Contains(hooks, want) {
			t.Errorf("no hook runs %q", want)
		}
	}
	if len(cfg.Archives) != 1 || len(cfg.Archives[0].IDs) != 2 {
		t.Fatalf("archives: %+v", cfg.Archives)
	}
	files, _ := yaml.Marshal(cfg.Archives[0].Files)
	for _, want := range []string{"LICENSE", "dist-extra/man/man1/*", "dist-extra/completions/*"} {
		if !strings.Contains(string(files), want) {
			t.Errorf("the archives leave out %s", want)
		}
	}
	if len(cfg.Nfpms) != 1 || !slices.Contains(cfg.Nfpms[0].Formats, "deb") || !slices.Contains(cfg.Nfpms[0].Formats, "rpm") || len(cfg.Nfpms[0].IDs) != 2 {
		t.Fatalf("nfpms: %+v", cfg.Nfpms)
	}
	dst := map[string]string{}
	for _, c := range cfg.Nfpms[0].Contents {
		dst[c.Src] = c.Dst
	}
	for src, want := range map[string]string{
		"dist-extra/man/man1/*":                  "/usr/share/man/man1/", // git evolve --help: git runs man git-evolve
		"dist-extra/completions/git-evolve.bash": "/usr/share/bash-completion/completions/git-evolve",
		"dist-extra/completions/git-evolve.zsh":  "/usr/share/zsh/site-functions/_git-evolve",
		"dist-extra/completions/git-evolve.fish": "/usr/share/fish/vendor_completions.d/git-evolve.fish",
	} {
		if dst[src] != want {
			t.Errorf("the packages put %s at %q, want %s", src, dst[src], want)
		}
	}
	if len(cfg.Casks) != 1 {
		t.Fatalf("homebrew_casks: %+v", cfg.Casks)
	}
	cask := cfg.Casks[0]
	if !slices.Contains(cask.Binaries, "git-evolve") || !slices.Contains(cask.Binaries, "git-evolve-mcp") || len(cask.Manpages) == 0 || len(cask.Completions) != 3 {
		t.Errorf("the cask installs %+v", cask)
	}

	wf, err := os.ReadFile("../../.github/workflows/release.yml")
	if err != nil {
		t.Fatal(err)
	}
	var w struct {
		On struct {
			Push struct{ Tags []string }
		}
		Jobs map[string]struct {
			Steps []struct {
				Uses string
				With map[string]string
			}
		}
	}
	if err := yaml.Unmarshal(wf, &w); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(w.On.Push.Tags, "v*") {
		t.Errorf("the release workflow does not run on a pushed tag: %+v", w.On)
	}
	runs := false
	for _, j := range w.Jobs {
		for _, s := range j.Steps {
			if strings.HasPrefix(s.Uses, "goreleaser/goreleaser-action@") && strings.Contains(s.With["args"], "release --clean") {
				runs = true
			}
		}
	}
	if !runs {
		t.Error("the release workflow does not run goreleaser release")
	}

	// Every push checks the configuration and builds a snapshot of all a
	// release makes, and installs its deb package.
	ci, err := os.ReadFile("../../.github/workflows/ci.yml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"args: check", "release --snapshot --clean --skip=publish", "dpkg -i dist/git-evolve_", "git evolve --help", "bash .ci/run"} {
		if !strings.Contains(string(ci), want) {
			t.Errorf("ci.yml does not run %q", want)
		}
	}
}

// TestGoreleaser checks the configuration with goreleaser itself and makes
// a snapshot build for this machine, where goreleaser is on PATH (.ci/run
// builds it, and after the tests makes a whole snapshot release and checks
// its deb package): the build holds both programs, and its hooks make the
// manual pages and the completions.
func TestGoreleaser(t *testing.T) {
	testenv.Slow(t)
	gr, err := exec.LookPath("goreleaser")
	if err != nil {
		t.Skip("goreleaser is not on PATH (the ci workflow's release-snapshot job runs it)")
	}
	// A clone, so that the build's hooks and dist/ stay out of the working
	// tree, with the working tree's changes copied in: what is tested is
	// what is here, committed or not.
	dir := t.TempDir()
	if out, err := exec.Command("git", "clone", "-q", "--no-local", "../..", dir).CombinedOutput(); err != nil {
		t.Skipf("no clone of this repository: %v\n%s", err, out)
	}
	changed, err := exec.Command("sh", "-c", "cd ../.. && { git diff --name-only HEAD; git ls-files --others --exclude-standard; }").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(changed)) {
		data, err := os.ReadFile(filepath.Join("../..", f))
		if err != nil {
			os.Remove(filepath.Join(dir, f)) // deleted here
			continue
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"check"}, {"build", "--snapshot", "--clean", "--single-target"}} {
		cmd := exec.Command(gr, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOMEBREW_TAP_TOKEN=none", "GOFLAGS=-buildvcs=true")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("goreleaser %v: %v\n%s", args, err, out)
		}
	}
	var found []string
	filepath.WalkDir(filepath.Join(dir, "dist"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			found = append(found, filepath.Base(p))
		}
		return nil
	})
	for _, want := range []string{"git-evolve", "git-evolve-mcp"} {
		if !slices.Contains(found, want) {
			t.Errorf("the snapshot built no %s: %v", want, found)
		}
	}
	man, _ := filepath.Glob(filepath.Join(dir, "dist-extra/man/man1/git-evolve*.1"))
	comp, _ := filepath.Glob(filepath.Join(dir, "dist-extra/completions/git-evolve.*"))
	if len(man) < 20 || len(comp) != 3 {
		t.Errorf("the build's hooks made %d manual pages and %d completion scripts", len(man), len(comp))
	}
}
