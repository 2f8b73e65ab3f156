package store

import (
	"bytes"
	"testing"
)

// A copy from the arena holds what was copied, whatever is copied after
// it, and an append to it cannot write over the next one; a large text is
// copied on its own.
func TestTextArena(t *testing.T) {
	var a textArena
	var texts, copies [][]byte
	for i := range 3000 {
		b := bytes.Repeat([]byte{byte('a' + i%26)}, 100+i%700)
		texts, copies = append(texts, b), append(copies, a.copy(b))
	}
	big := bytes.Repeat([]byte("x"), arenaBlock)
	bigCopy := a.copy(big)
	grown := append(copies[0], "more"...)
	for i := range texts {
		if !bytes.Equal(texts[i], copies[i]) {
			t.Fatalf("copy %d changed", i)
		}
	}
	if !bytes.Equal(bigCopy, big) || &bigCopy[0] == &big[0] {
		t.Fatal("the large text was not copied")
	}
	if string(grown[len(grown)-4:]) != "more" || &grown[0] == &copies[0][0] {
		t.Fatal("an append to a copy reached into the arena")
	}
}
