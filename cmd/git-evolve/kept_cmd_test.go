package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"os"
)

// keptSections are the sections of the view's file, in its table's order
// (docs/architecture.md).
var keptSections = []string{"lines", "merged", "copies", "state", "keys", "delta", "objects"}

// keptMain reads or replaces one section of the view's file (ledger.view), read and
// written as docs/architecture.md lays it out (the last generation's
// table read; the file written anew as one generation, sealed again):
// `kept get FILE SECTION OUT` writes the section's bytes to OUT, `kept put
// FILE SECTION IN` puts IN's bytes in its place (an empty IN: the section
// absent), `kept has FILE SECTION` fails unless the file is there, reads,
// and holds the section. The scripts (and the shell scripts they run) damage or drop one
// section with it, as they would a file of its own.
func keptMain() int {
	if err := kept(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kept:", err)
		return 1
	}
	return 0
}

func kept(args []string) error {
	if !(len(args) == 4 && (args[0] == "get" || args[0] == "put") || len(args) == 3 && args[0] == "has") {
		return fmt.Errorf("usage: kept get|put FILE SECTION PATH, or kept has FILE SECTION")
	}
	which := -1
	for i, name := range keptSections {
		if name == args[2] {
			which = i
		}
	}
	if which < 0 {
		return fmt.Errorf("no section %q (%v)", args[2], keptSections)
	}
	data, err := os.ReadFile(args[1])
	if err != nil {
		return err
	}
	// the magic line and the secret; each generation's table: the
	// sections' places, the file's length and the seal
	const magic = "git-evolve view 1\n"
	head := len(magic) + 16
	n := len(keptSections)
	tail := 16*n + 8 + 16
	if len(data) < head+tail || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%s is no view's file", args[1])
	}
	seal := func(table []byte) []byte {
		sum := sha256.Sum256(append(append([]byte{}, data[:head]...), table...))
		return sum[:16]
	}
	table := data[len(data)-tail : len(data)-16]
	if binary.LittleEndian.Uint64(table[16*n:]) != uint64(len(data)) || !bytes.Equal(seal(table), data[len(data)-16:]) {
		return fmt.Errorf("the last table of %s does not hold", args[1])
	}
	sections := make([][]byte, n)
	for i := range sections {
		off, size := binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])
		sections[i] = data[off : off+size]
	}
	switch {
	case args[0] == "has" && len(sections[which]) == 0:
		return fmt.Errorf("%s holds no %s section", args[1], args[2])
	case args[0] == "has":
		return nil
	case args[0] == "get":
		return os.WriteFile(args[3], sections[which], 0o644)
	}
	in, err := os.ReadFile(args[3])
	if err != nil {
		return err
	}
	sections[which] = in
	// the file written anew: one generation, the same head
	var out bytes.Buffer
	out.Write(data[:head])
	var newTable []byte
	for _, s := range sections {
		newTable = binary.LittleEndian.AppendUint64(newTable, uint64(out.Len()))
		newTable = binary.LittleEndian.AppendUint64(newTable, uint64(len(s)))
		out.Write(s)
	}
	newTable = binary.LittleEndian.AppendUint64(newTable, uint64(out.Len()+len(newTable)+8+16))
	out.Write(newTable)
	out.Write(seal(newTable))
	return os.WriteFile(args[1], out.Bytes(), 0o600)
}
