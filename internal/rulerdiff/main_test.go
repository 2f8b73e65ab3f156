package rulerdiff

import (
	"os"
	"testing"

	"github.com/git-evolve/git-evolve/internal/testenv"
)

// TestMain runs the tests with a git of their own (internal/testenv).
func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
