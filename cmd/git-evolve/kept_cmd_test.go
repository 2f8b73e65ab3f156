package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
)

// keptSections are the sections of verify-kept, in its table's order
// (docs/architecture.md).
var keptSections = []string{"state", "keys", "delta", "objects"}

// keptMain reads or replaces one section of a verify-kept file, read and
// written as docs/architecture.md lays it out, its table summed again:
// `kept get FILE SECTION OUT` writes the section's bytes to OUT, `kept put
// FILE SECTION IN` puts IN's bytes in its place (an empty IN: the section
// absent). The scripts (and the shell scripts they run) damage or drop one
// section with it, as they would a file of its own.
func keptMain() int {
	if err := kept(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kept:", err)
		return 1
	}
	return 0
}

func kept(args []string) error {
	if len(args) != 4 || (args[0] != "get" && args[0] != "put") {
		return fmt.Errorf("usage: kept get|put FILE SECTION PATH")
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
	const magic = "git-evolve verify kept\n"
	head := len(magic) + 1
	tail := 16*len(keptSections) + 4
	if len(data) < head+tail || string(data[:len(magic)]) != magic {
		return fmt.Errorf("%s is no verify-kept", args[1])
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	table := data[len(data)-tail : len(data)-4]
	sum := crc32.Update(crc32.Checksum(data[:head], castagnoli), castagnoli, table)
	if sum != binary.LittleEndian.Uint32(data[len(data)-4:]) {
		return fmt.Errorf("the table of %s does not hold", args[1])
	}
	sections := make([][]byte, len(keptSections))
	for i := range sections {
		off, n := binary.LittleEndian.Uint64(table[16*i:]), binary.LittleEndian.Uint64(table[16*i+8:])
		sections[i] = data[off : off+n]
	}
	if args[0] == "get" {
		return os.WriteFile(args[3], sections[which], 0o644)
	}
	in, err := os.ReadFile(args[3])
	if err != nil {
		return err
	}
	sections[which] = in
	var out bytes.Buffer
	out.Write(data[:head])
	var newTable []byte
	at := head
	for _, s := range sections {
		out.Write(s)
		newTable = binary.LittleEndian.AppendUint64(newTable, uint64(at))
		newTable = binary.LittleEndian.AppendUint64(newTable, uint64(len(s)))
		at += len(s)
	}
	out.Write(newTable)
	out.Write(binary.LittleEndian.AppendUint32(nil, crc32.Update(crc32.Checksum(data[:head], castagnoli), castagnoli, newTable)))
	return os.WriteFile(args[1], out.Bytes(), 0o600)
}
