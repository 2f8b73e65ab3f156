//go:build unix

package store

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

// mapBudget bounds the bytes of state files a process keeps mapped, and
// maxMappings the mappings. A command keeps a state file mapped until it
// lets it go (the saved view: once its blocks are inflated and it is
// saved again, its lines pointing into the blocks inflated). A
// long-lived process (git evolve run, git evolve mcp) reads the view again
// as the ledger moves: past either bound it reads the file into memory,
// which the collector frees. A mapping also keeps a replaced file's blocks
// on disk, so the budget bounds that too.
var (
	mapBudget   int64 = 512 << 20
	maxMappings       = 64
)

// minMapped is the smallest file mapped: a smaller one is read (a mapping
// saves little there, and each one is an entry the kernel counts). The
// view's file holds sections most readers do not read (a log reads the
// lines, not verify's summaries): mapped, only the pages read are paid
// for. At 10,000 records it is 1 MB, which a log -n 20 read whole twice
// (2 to 5 ms more than when verify's sections were a file of their own).
var minMapped int64 = 64 << 10

var maps struct {
	sync.Mutex
	bytes   int64
	live    map[*byte]int64 // each mapping's first byte, and its size
	pending int             // mappings being made
}

// MapEvery makes ReadStateFile map every file it reads, however small,
// until the function it returns is called: for a test of a reader that
// lets a mapping go, whose files are small enough to be read (reading a
// mapping let go faults; reading memory read does not).
func MapEvery() (restore func()) {
	was := minMapped
	minMapped = 1
	return func() { minMapped = was }
}

// ReadStateFile returns the bytes of the state file at path (a regular file
// of at most max bytes), mapped read-only rather than read when it is of
// minMapped bytes or more and the process's mappings stay within mapBudget
// and maxMappings: a mapped page of a file in the page cache costs a
// fraction of a page read into new memory (the kernel maps its neighbours
// with it). Unmap undoes the mapping; it is otherwise never undone. A
// state file is only ever replaced by a rename, which leaves a mapping of
// the old file whole, or appended to (PutKept), which changes no
// byte mapped; a file cut short in place while mapped (by hand) would
// fault the process, as it would git's own mapped packs.
func ReadStateFile(path string, max int64) ([]byte, error) {
	return readStateFile(path, max, readerTries)
}

// readStateFile is ReadStateFile trying for a writer's lock tries times
// (flockWait).
func readStateFile(path string, max int64, tries int) ([]byte, error) {
	f, size, err := openStateFile(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A file appended to (PutKept) is read whole, not part way
	// through an append: under a shared lock, its size as it is then.
	if flockWait(f, syscall.LOCK_SH, tries) == nil {
		defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		fi, err := f.Stat()
		if err != nil {
			return nil, err
		}
		if size = fi.Size(); size > max {
			return nil, fmt.Errorf("%s: %w", path, errStateFileSize)
		}
	}
	if size < minMapped {
		return readOpened(f, size)
	}
	maps.Lock()
	room := maps.bytes+size <= mapBudget && len(maps.live)+maps.pending < maxMappings
	if room {
		maps.bytes += size
		maps.pending++
	}
	maps.Unlock()
	if !room {
		return readOpened(f, size)
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_PRIVATE)
	maps.Lock()
	maps.pending--
	if err != nil {
		maps.bytes -= size
	} else {
		if maps.live == nil {
			maps.live = map[*byte]int64{}
		}
		maps.live[&data[0]] = size
	}
	maps.Unlock()
	if err != nil {
		return readOpened(f, size)
	}
	return data, nil
}

// Unmap undoes the mapping whose first byte data starts at, when
// ReadStateFile made one (data it read is left to the collector); nothing
// may point into it after.
func Unmap(data []byte) {
	if len(data) == 0 {
		return
	}
	maps.Lock()
	size, ok := maps.live[&data[0]]
	if ok {
		delete(maps.live, &data[0])
		maps.bytes -= size
	}
	maps.Unlock()
	if ok {
		_ = syscall.Munmap(unsafe.Slice(&data[0], size))
	}
}

// How many times a reader and a writer try for another's lock, a
// millisecond or more apart (a loaded machine sleeps longer): an append
// takes far less; a holder stopped part way is not waited for past it (one
// killed lets go of its lock). The tests change writerTries.
const readerTries = 20

var writerTries = 200

// flockWait takes the lock how (syscall.LOCK_SH or LOCK_EX) on f, trying
// tries times more, a millisecond or more apart, while another holds it.
// It returns nil once it has it, and else why not: busy (another holds
// it still), or another error (the file system locks nothing).
func flockWait(f *os.File, how, tries int) (err error) {
	for i := 0; ; i++ {
		err = syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if !busy(err) || i >= tries {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

// busy says that err is flock's when another holds the lock.
func busy(err error) bool { return err == syscall.EWOULDBLOCK || err == syscall.EINTR }
