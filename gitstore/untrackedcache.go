package gitstore

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"os"
	"sort"
)

// The untracked scan's cache file (see untracked.go) is local and derived:
// a missing, damaged or older one is read as empty, and the scan reads the
// directories again. Its layout, integers as varints:
//
//	"git-evolve untracked cache\n" 2 (1: listings kept FIFOs and sockets)
//	rules digest (32 bytes)
//	count, then each directory: path, mtime, ctime, inode, device,
//	  index names digest (8 bytes), count, then each name and 0|1 (a
//	  directory), count, then each name the directory lacks
//	count, then each decision: path, flags (1 directory, 2 ignored)
//	CRC-32 of all the above (4 bytes)
const untrackedCacheMagic = "git-evolve untracked cache\n\x02"

// readUntrackedCache reads the cache at path, empty when there is none or
// it cannot be read.
func readUntrackedCache(path string) *untrackedCache {
	data, err := os.ReadFile(path)
	if err == nil {
		if c, err := decodeUntrackedCache(data); err == nil {
			return c
		}
	}
	return &untrackedCache{dirs: map[string]*ucDir{}, decisions: map[string]ucDecision{}}
}

var errBadCache = errors.New("untracked cache: damaged")

// decodeUntrackedCache parses the cache file's content.
func decodeUntrackedCache(data []byte) (*untrackedCache, error) {
	if len(data) < len(untrackedCacheMagic)+32+4 || string(data[:len(untrackedCacheMagic)]) != untrackedCacheMagic {
		return nil, errBadCache
	}
	body := data[:len(data)-4]
	if crc32.ChecksumIEEE(body) != binary.BigEndian.Uint32(data[len(data)-4:]) {
		return nil, errBadCache
	}
	d := &cacheDecoder{b: body[len(untrackedCacheMagic):]}
	c := &untrackedCache{dirs: map[string]*ucDir{}, decisions: map[string]ucDecision{}}
	copy(c.rules[:], d.bytes(32))
	for n := d.count(); n > 0 && d.err == nil; n-- {
		path := d.str()
		l := &ucDir{}
		l.key.mtime, l.key.ctime = d.varint(), d.varint()
		l.key.ino, l.key.dev = d.uvarint(), d.uvarint()
		l.ihash = binary.BigEndian.Uint64(d.bytes(8))
		for k := d.count(); k > 0 && d.err == nil; k-- {
			name := d.str()
			l.cands = append(l.cands, ucName{name: name, dir: d.byte() == 1})
		}
		for k := d.count(); k > 0 && d.err == nil; k-- {
			l.gone = append(l.gone, d.str())
		}
		c.dirs[path] = l
	}
	for n := d.count(); n > 0 && d.err == nil; n-- {
		path := d.str()
		f := d.byte()
		c.decisions[path] = ucDecision{dir: f&1 != 0, ignored: f&2 != 0}
	}
	if d.err != nil || len(d.b) != 0 {
		return nil, errBadCache
	}
	return c, nil
}

// encode is the cache file's content, in a stable order.
func (c *untrackedCache) encode() []byte {
	b := []byte(untrackedCacheMagic)
	b = append(b, c.rules[:]...)
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	dirs := make([]string, 0, len(c.dirs))
	for p := range c.dirs {
		dirs = append(dirs, p)
	}
	sort.Strings(dirs)
	b = binary.AppendUvarint(b, uint64(len(dirs)))
	for _, p := range dirs {
		l := c.dirs[p]
		str(p)
		b = binary.AppendVarint(b, l.key.mtime)
		b = binary.AppendVarint(b, l.key.ctime)
		b = binary.AppendUvarint(b, l.key.ino)
		b = binary.AppendUvarint(b, l.key.dev)
		b = binary.BigEndian.AppendUint64(b, l.ihash)
		b = binary.AppendUvarint(b, uint64(len(l.cands)))
		for _, n := range l.cands {
			str(n.name)
			if n.dir {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
		b = binary.AppendUvarint(b, uint64(len(l.gone)))
		for _, g := range l.gone {
			str(g)
		}
	}
	paths := make([]string, 0, len(c.decisions))
	for p := range c.decisions {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	b = binary.AppendUvarint(b, uint64(len(paths)))
	for _, p := range paths {
		str(p)
		var f byte
		if c.decisions[p].dir {
			f |= 1
		}
		if c.decisions[p].ignored {
			f |= 2
		}
		b = append(b, f)
	}
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
}

// cacheDecoder reads the cache's fields; the first error sticks.
type cacheDecoder struct {
	b   []byte
	err error
}

func (d *cacheDecoder) bytes(n int) []byte {
	if d.err != nil || len(d.b) < n {
		d.err = errBadCache
		return make([]byte, n)
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

func (d *cacheDecoder) byte() byte { return d.bytes(1)[0] }

func (d *cacheDecoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *cacheDecoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint from d with read (binary.Uvarint or
// binary.Varint).
func readVarint[T int64 | uint64](d *cacheDecoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b)
	if n <= 0 {
		d.err = errBadCache
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count, bounded by the bytes left (each item takes one at
// least), so that damage cannot ask for a huge allocation or loop.
func (d *cacheDecoder) count() uint64 {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err = errBadCache
		return 0
	}
	return n
}

func (d *cacheDecoder) str() string {
	n := d.count()
	return string(d.bytes(int(n)))
}
