package setup

import (
	"bytes"
	"os"
	"testing"
)

// The shim init installs is the one the project carries in .githooks/.
func TestShimIsTheProjectsHook(t *testing.T) {
	carried, err := os.ReadFile("../.githooks/commit-msg")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(carried, commitMsgHook) {
		t.Error("setup/commit-msg.sh and .githooks/commit-msg differ: copy one over the other")
	}
	if !bytes.Contains(commitMsgHook, hookMarker) {
		t.Error("the shim lacks the marker that identifies it")
	}
}
