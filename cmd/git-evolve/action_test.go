package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// action.yml is a composite action that installs this module's command
// (the released binary, or built when asked), fetches the notes and writes
// the report to the job summary.
func TestActionYAML(t *testing.T) {
	data, err := os.ReadFile("../../action.yml")
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		Name string
		Runs struct {
			Using string
			Steps []struct {
				Uses, Run, Shell string
			}
		}
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if a.Runs.Using != "composite" {
		t.Fatalf("runs.using %q", a.Runs.Using)
	}
	var all strings.Builder
	for _, s := range a.Runs.Steps {
		if s.Run != "" && s.Shell == "" {
			t.Errorf("a run step without a shell: %q", s.Run)
		}
		all.WriteString(s.Run + "\n")
	}
	for _, want := range []string{"install-release.sh", "go install \"github.com/git-evolve/git-evolve/cmd/git-evolve@", "fetch-ledger.sh", "git evolve report --github"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("action.yml does not run %q", want)
		}
	}
}

// TestActionInstallsRelease runs the Action's install script against a
// release made here (its archive and checksums.txt, served by a stand-in
// for gh): it picks the runner's archive, checks it, unpacks it and puts it
// on the job's PATH; an archive that does not match its checksum is
// refused, and nothing is put on PATH.
func TestActionInstallsRelease(t *testing.T) {
	release := t.TempDir()
	bin := t.TempDir()
	// the release: an archive of the linux/arm64 build, and its checksum
	stage := t.TempDir()
	if err := os.WriteFile(filepath.Join(stage, "git-evolve"), []byte("#!/bin/sh\necho git-evolve 1.2.3\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	archive := filepath.Join(release, "git-evolve_1.2.3_linux_arm64.tar.gz")
	if out, err := exec.Command("tar", "-czf", archive, "-C", stage, "git-evolve").CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	sums := fmt.Sprintf("%x  git-evolve_1.2.3_linux_arm64.tar.gz\n%x  git-evolve_1.2.3_linux_amd64.tar.gz\n", sha256.Sum256(data), sha256.Sum256([]byte("other")))
	if err := os.WriteFile(filepath.Join(release, "checksums.txt"), []byte(sums), 0o644); err != nil {
		t.Fatal(err)
	}
	// gh: the latest release is v1.2.3; download copies the patterns asked.
	gh := `#!/bin/sh
log="$GH_LOG"; echo "gh $*" >>"$log"
case "$1 $2" in
"release view") echo v1.2.3 ;;
"release download")
	shift 3
	while [ $# -gt 0 ]; do
		case "$1" in --pattern) cp "$GH_RELEASE/$2" . || exit 1; shift 2 ;; *) shift ;; esac
	done ;;
*) exit 2 ;;
esac
`
	if err := os.WriteFile(filepath.Join(bin, "gh"), []byte(gh), 0o755); err != nil {
		t.Fatal(err)
	}
	install := func(runnerTemp string) (string, string, error) {
		ghPath := filepath.Join(runnerTemp, "GITHUB_PATH")
		cmd := exec.Command("sh", "../../.github/install-release.sh")
		cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "RUNNER_OS=Linux", "RUNNER_ARCH=ARM64",
			"RUNNER_TEMP="+runnerTemp, "GITHUB_PATH="+ghPath, "VERSION=latest", "GH_RELEASE="+release, "GH_LOG="+filepath.Join(runnerTemp, "gh.log"))
		out, err := cmd.CombinedOutput()
		path, _ := os.ReadFile(ghPath)
		return string(out), strings.TrimSpace(string(path)), err
	}
	temp := t.TempDir()
	out, path, err := install(temp)
	if err != nil {
		t.Fatalf("install: %v\n%s", err, out)
	}
	if path != filepath.Join(temp, "git-evolve-1.2.3") {
		t.Fatalf("GITHUB_PATH has %q", path)
	}
	if v, err := exec.Command(filepath.Join(path, "git-evolve")).Output(); err != nil || string(v) != "git-evolve 1.2.3\n" {
		t.Fatalf("the installed git-evolve: %v %q", err, v)
	}
	log, _ := os.ReadFile(filepath.Join(temp, "gh.log"))
	if !strings.Contains(string(log), "release download v1.2.3 --repo git-evolve/git-evolve --pattern git-evolve_1.2.3_linux_arm64.tar.gz --pattern checksums.txt") {
		t.Errorf("gh was asked: %s", log)
	}

	// An archive that is not the one the checksums list is refused.
	if err := os.WriteFile(archive, append(data, 0), 0o644); err != nil {
		t.Fatal(err)
	}
	temp = t.TempDir()
	out, path, err = install(temp)
	if err == nil || !strings.Contains(out, "does not match checksums.txt") || path != "" {
		t.Fatalf("a tampered archive: %v, %q, PATH %q", err, out, path)
	}
}
