package gitstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unsafe"
)

// indexEntry is what the untracked scan needs of one entry of git's index
// file: its path and mode, and the flags that change what the working tree
// is expected to hold.
type indexEntry struct {
	path        string
	mode        uint32
	stage       int
	assumeValid bool // "assume unchanged": git does not look at the file
	skipTree    bool // "skip-worktree": the file is not expected in the working tree
}

// errIndexUnsupported is an index this reader does not take as it is (a
// split or sparse index, an unknown version); the caller asks git instead.
var errIndexUnsupported = errors.New("index: unsupported")

// parseIndex reads the entries of git's index file (versions 2, 3 and 4,
// with SHA-1 object names; index-format.txt). The entries come in the
// file's order, which git keeps sorted by path. A split index ("link") or a
// sparse one ("sdir") is errIndexUnsupported: its entries are not all here.
// The trailing checksum is not verified (git replaces the file by a rename,
// so it is never torn); the structure is, to the last byte.
func parseIndex(data []byte) ([]indexEntry, error) {
	const hashLen = 20
	bad := func(format string, args ...any) error {
		return fmt.Errorf("index: %s", fmt.Sprintf(format, args...))
	}
	if len(data) < 12+hashLen || string(data[:4]) != "DIRC" {
		return nil, bad("not an index file")
	}
	version := binary.BigEndian.Uint32(data[4:])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: version %d", errIndexUnsupported, version)
	}
	count := binary.BigEndian.Uint32(data[8:])
	end := len(data) - hashLen
	if uint64(count) > uint64(end)/16 { // no entry is under 16 bytes
		return nil, bad("%d entries cannot fit in %d bytes", count, len(data))
	}
	entries := make([]indexEntry, 0, count)
	// The paths are cut from one string, not allocated one by one: data
	// itself (versions 2 and 3; the caller leaves data as it is from then
	// on), or a buffer the paths are appended to (version 4).
	var str string
	var buf []byte
	var spans [][2]int
	if version < 4 {
		str = unsafe.String(unsafe.SliceData(data), end)
	} else {
		buf = make([]byte, 0, end)
		spans = make([][2]int, 0, count)
	}
	off := 12
	var prev []byte // version 4: the previous entry's path
	for i := uint32(0); i < count; i++ {
		const fixed = 62 // stat data (40), object name (20), flags (2)
		if off+fixed > end {
			return nil, bad("entry %d is cut short", i)
		}
		e := data[off:]
		mode := binary.BigEndian.Uint32(e[24:])
		flags := binary.BigEndian.Uint16(e[60:])
		hdr := fixed
		var ext uint16
		if flags&0x4000 != 0 {
			if version < 3 {
				return nil, bad("entry %d has extended flags in a version %d index", i, version)
			}
			if off+fixed+2 > end {
				return nil, bad("entry %d is cut short", i)
			}
			ext = binary.BigEndian.Uint16(e[62:])
			hdr += 2
		}
		nameLen := int(flags & 0xfff)
		var path []byte
		pathAt := 0
		if version == 4 {
			strip, n := decodeIndexVarint(data[off+hdr : end])
			if n == 0 || strip > uint64(len(prev)) {
				return nil, bad("entry %d has a bad path prefix", i)
			}
			rest := data[off+hdr+n : end]
			nul := bytes.IndexByte(rest, 0)
			if nul < 0 {
				return nil, bad("entry %d has no end to its path", i)
			}
			start := len(buf)
			buf = append(append(buf, prev[:uint64(len(prev))-strip]...), rest[:nul]...)
			path = buf[start:]
			spans = append(spans, [2]int{start, len(buf)})
			off += hdr + n + nul + 1
		} else {
			rest := data[off+hdr : end]
			nul := bytes.IndexByte(rest, 0)
			if nul < 0 {
				return nil, bad("entry %d has no end to its path", i)
			}
			if nameLen < 0xfff && nul != nameLen {
				return nil, bad("entry %d: its path is %d bytes, its flags say %d", i, nul, nameLen)
			}
			path = rest[:nul]
			pathAt = off + hdr
			size := (hdr + nul + 8) &^ 7 // NUL padding to a multiple of 8, at least one
			if off+size > end {
				return nil, bad("entry %d is cut short", i)
			}
			off += size
		}
		if len(path) == 0 {
			// A split index's entries that replace shared ones have none.
			return nil, fmt.Errorf("%w: entry %d has no path", errIndexUnsupported, i)
		}
		prev = path
		p := ""
		if version < 4 {
			p = str[pathAt : pathAt+len(path)]
		}
		entries = append(entries, indexEntry{
			path:        p,
			mode:        mode,
			stage:       int(flags>>12) & 3,
			assumeValid: flags&0x8000 != 0,
			skipTree:    ext&0x4000 != 0,
		})
	}
	if version == 4 {
		str = string(buf)
		for i := range entries {
			entries[i].path = str[spans[i][0]:spans[i][1]]
		}
	}
	for off < end {
		if off+8 > end {
			return nil, bad("an extension is cut short")
		}
		sig := string(data[off : off+4])
		size := binary.BigEndian.Uint32(data[off+4:])
		if uint64(size) > uint64(end-off-8) {
			return nil, bad("extension %q runs past the end", sig)
		}
		if sig == "link" || sig == "sdir" {
			return nil, fmt.Errorf("%w: extension %q", errIndexUnsupported, sig)
		}
		off += 8 + int(size)
	}
	return entries, nil
}

// decodeIndexVarint reads git's offset varint (varint.c, not LEB128): it
// returns the value and the bytes read, 0 when b holds none.
func decodeIndexVarint(b []byte) (uint64, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := uint64(c & 127)
	n := 1
	for c&128 != 0 {
		if n >= len(b) || val >= 1<<56 {
			return 0, 0
		}
		val++
		c = b[n]
		n++
		val = val<<7 | uint64(c&127)
	}
	return val, n
}
