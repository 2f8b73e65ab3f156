package setup

import (
	"bytes"
	"os"
	"testing"
)

// The shims init installs are the ones the project carries in .githooks/.
func TestShimsAreTheProjectsHooks(t *testing.T) {
	for _, name := range HookNames {
		carried, err := os.ReadFile("../.githooks/" + name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(carried, shim(name)) {
			t.Errorf("setup/hooks/%s and .githooks/%s differ: copy one over the other", name, name)
		}
		if !isShim(name, shim(name)) {
			t.Errorf("the %s shim lacks the marker that identifies it", name)
		}
	}
}
