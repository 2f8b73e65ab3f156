package loop

import (
	"strings"
	"testing"
)

func TestTailKeepsTheEnd(t *testing.T) {
	tl := newTail(10)
	tl.Write([]byte("0123456789"))
	tl.Write([]byte("abc\x1b[31mX"))
	got := string(tl.Transcript())
	if !strings.HasPrefix(got, "[the first 9 bytes of the agent's output are not kept]\n") || strings.ContainsRune(got, 0x1b) || !strings.HasSuffix(got, "X") {
		t.Errorf("transcript %q", got)
	}
	big := newTail(4)
	big.Write([]byte("abcdefgh"))
	if got := string(big.buf); got != "efgh" {
		t.Errorf("one write longer than the tail: %q", got)
	}
}
