package goals

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Trust is the local record of the goals files whose checks this machine
// may run: a goals file is shell commands from the repository, so one that
// arrives by clone or pull does not run until someone here trusts its
// content. It is kept under the git directory and never shared.
type Trust struct {
	path string
}

// TrustAt returns the trust kept in dir (git-evolve's state directory).
func TrustAt(dir string) *Trust { return &Trust{path: filepath.Join(dir, "trusted-goals")} }

// Digest names a goals file's content for trust: its SHA-256.
func Digest(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// Trusted reports whether content with this digest is trusted.
func (t *Trust) Trusted(digest string) (bool, error) {
	f, err := os.Open(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading trusted goals: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if d, _, _ := strings.Cut(sc.Text(), " "); d == digest {
			return true, nil
		}
	}
	return false, sc.Err()
}

// Add trusts content with this digest; note says what it was (a path).
// Trusting twice changes nothing.
func (t *Trust) Add(digest, note string) error {
	if ok, err := t.Trusted(digest); err != nil || ok {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(t.path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(t.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return fmt.Errorf("writing trusted goals: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s %s\n", digest, note); err != nil {
		f.Close()
		return fmt.Errorf("writing trusted goals: %w", err)
	}
	return f.Close()
}

// Snapshot is what the trust file holds now (nil when there is none), for
// Restore.
func (t *Trust) Snapshot() ([]byte, error) {
	data, err := os.ReadFile(t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if data == nil {
		data = []byte{}
	}
	return data, err
}

// Restore puts back what Snapshot returned: the file as it was, or none.
func (t *Trust) Restore(snap []byte) error {
	if snap == nil {
		if err := os.Remove(t.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	tmp := t.path + ".restore"
	if err := os.WriteFile(tmp, snap, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, t.path)
}
