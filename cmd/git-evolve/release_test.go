package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// The release configuration builds what the README promises (linux, darwin
// and windows, amd64 and arm64), stamps the version, and puts the manual
// pages and completion scripts the binary makes into every archive.
func TestReleaseConfig(t *testing.T) {
	data, err := os.ReadFile("../../.goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Before struct{ Hooks []string }
		Builds []struct {
			Main    string
			Goos    []string
			Goarch  []string
			Ldflags []string
		}
		Archives []struct {
			Files []any
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Builds) != 1 || cfg.Builds[0].Main != "./cmd/git-evolve" {
		t.Fatalf("builds: %+v", cfg.Builds)
	}
	b := cfg.Builds[0]
	for _, os := range []string{"linux", "darwin", "windows"} {
		if !slices.Contains(b.Goos, os) {
			t.Errorf("no %s build", os)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		if !slices.Contains(b.Goarch, arch) {
			t.Errorf("no %s build", arch)
		}
	}
	if !strings.Contains(strings.Join(b.Ldflags, " "), "-X main.version=") {
		t.Error("the release version is not stamped into main.version")
	}
	hooks := strings.Join(cfg.Before.Hooks, "\n")
	for _, want := range []string{"install-man dist-extra/man/man1", "completion $s"} {
		if !strings.Contains(hooks, want) {
			t.Errorf("no hook runs %q", want)
		}
	}
	if len(cfg.Archives) != 1 {
		t.Fatalf("archives: %+v", cfg.Archives)
	}
	files, _ := yaml.Marshal(cfg.Archives[0].Files)
	for _, want := range []string{"LICENSE", "dist-extra/man/man1/*", "dist-extra/completions/*"} {
		if !strings.Contains(string(files), want) {
			t.Errorf("the archives leave out %s", want)
		}
	}
}
