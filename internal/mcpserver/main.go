package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/git-evolve/git-evolve/internal/buildinfo"
	"github.com/git-evolve/git-evolve/internal/mcptools"
)

// EnvBinary names the git-evolve the server runs; git evolve mcp sets it to
// itself. Without it the server runs the git-evolve beside its own
// executable, else the one on PATH.
const EnvBinary = "GIT_EVOLVE_BIN"

// maxOutput bounds what the server reads of one command's output: the
// ledger's export is the largest (about 46 MB at 100,000 records).
const maxOutput = 256 << 20

const usage = `usage: git-evolve-mcp [-C <path>] [--tools]

Serves git-evolve's loop to an agent over the Model Context Protocol, on
standard input and output. git evolve mcp runs it; an MCP client may also
start it itself. Each tool runs the git evolve command of the same name in
the repository and returns its JSON:

%s
Resources: evolve://ledger (every record, as git evolve export prints them)
and evolve://cycle/{n} (one cycle, as git evolve show --json prints it).

  -C <path>   the repository (default: the current directory)
  --tools     print the tools with their hints, one a line, and exit
  --version   print the version and exit
  -h, --help  print this help and exit

Exit: 0 when the client closed the session, 1 on an error, 10 on a bad
command line.
`

// Main is git-evolve-mcp: it serves on stdin and stdout until the client
// closes them, or until it is interrupted. version is the release the
// build names (empty: the module's version from the build's stamp).
func Main(version string, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	version = Version(version)
	dir := "."
	tools := false
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-h" || a == "--help":
			fmt.Fprintf(stdout, usage, mcptools.List())
			return 0
		case a == "--version":
			fmt.Fprintf(stdout, "git-evolve-mcp %s\n", version)
			return 0
		case a == "--tools":
			tools = true
		case a == "-C" && i+1 < len(args):
			i++
			dir = filepath.Join(dir, args[i])
			if filepath.IsAbs(args[i]) {
				dir = args[i]
			}
		case strings.HasPrefix(a, "-C") && len(a) > 2:
			dir = filepath.Join(dir, a[2:])
			if filepath.IsAbs(a[2:]) {
				dir = a[2:]
			}
		default:
			fmt.Fprintf(stderr, "git-evolve-mcp: error: unknown argument %q\ngit-evolve-mcp: hint: see git-evolve-mcp --help\n", a)
			return 10
		}
	}
	if tools {
		for _, t := range mcptools.Tools {
			fmt.Fprintf(stdout, "%-19s %s\n", t.Name, t.Hints())
		}
		return 0
	}
	bin, err := evolveBinary()
	if err != nil {
		fmt.Fprintf(stderr, "git-evolve-mcp: error: %v\ngit-evolve-mcp: hint: put git-evolve on PATH, or name it in %s\n", err, EnvBinary)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s := New(Exec(bin, dir), version)
	err = s.Run(ctx, &mcp.IOTransport{Reader: io.NopCloser(stdin), Writer: nopWriteCloser{stdout}})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) && !isClosed(err) {
		fmt.Fprintf(stderr, "git-evolve-mcp: error: %v\n", err)
		return 1
	}
	return 0
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// isClosed is the error a session ends with when the client closed its
// end.
func isClosed(err error) bool {
	return strings.Contains(err.Error(), "closed") || strings.Contains(err.Error(), "EOF")
}

// evolveBinary is the git-evolve the tools run.
func evolveBinary() (string, error) {
	if b := os.Getenv(EnvBinary); b != "" {
		return b, nil
	}
	if self, err := os.Executable(); err == nil {
		beside := filepath.Join(filepath.Dir(self), "git-evolve"+exeSuffix())
		if fi, err := os.Stat(beside); err == nil && fi.Mode().IsRegular() {
			return beside, nil
		}
	}
	b, err := exec.LookPath("git-evolve")
	if err != nil {
		return "", fmt.Errorf("git-evolve is neither beside git-evolve-mcp nor on PATH")
	}
	return b, nil
}

// Exec runs git evolve commands as bin in dir, one at a time: a cycle's
// tools are steps of one loop, and the commands take the repository's
// locks as they would from a terminal. A cancelled request interrupts its
// command, which stops as it would at ^C, and kills it 10 seconds later.
func Exec(bin, dir string) Runner {
	sem := make(chan struct{}, 1)
	return func(ctx context.Context, args []string) ([]byte, []byte, int) {
		select { // one at a time; a request cancelled while it waits never runs
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil, []byte("git-evolve-mcp: cancelled before it ran"), 1
		}
		defer func() { <-sem }()
		if ctx.Err() != nil {
			return nil, []byte("git-evolve-mcp: cancelled before it ran"), 1
		}
		cmd := exec.CommandContext(ctx, bin, append([]string{"-C", dir, "--color=never"}, args...)...)
		cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
		cmd.WaitDelay = 10 * time.Second
		stdout := &capped{max: maxOutput}
		stderr := &capped{max: 1 << 20}
		cmd.Stdout, cmd.Stderr = stdout, stderr
		err := cmd.Run()
		code := 0
		var exit *exec.ExitError
		switch {
		case errors.As(err, &exit) && exit.ExitCode() >= 0:
			code = exit.ExitCode()
		case err != nil:
			fmt.Fprintf(stderr, "git-evolve-mcp: running git evolve: %v", err)
			code = 1
		}
		if stdout.over {
			return nil, []byte(fmt.Sprintf("git-evolve-mcp: git evolve %s printed more than %d MiB", args[0], maxOutput>>20)), 1
		}
		return stdout.Bytes(), stderr.Bytes(), code
	}
}

// capped keeps the first max bytes written to it, and whether there were
// more.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// Version is the release (else the module's version as the build stamped
// it, else devel), with the commit the build's VCS stamp names.
func Version(release string) string {
	st := buildinfo.Read(release)
	if len(st.Commit) >= 12 {
		return st.Version + " (commit " + st.Commit[:12] + ")"
	}
	return st.Version
}

// exeSuffix is what a program's file name ends with here: .exe on Windows.
func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
