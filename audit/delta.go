package audit

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// A verify that read every summary (brought forward or not) also keeps,
// beside the state, in the view's file (kept.go):
//
//   - the keys: each record's summaries filed by key in a hash table
//     that is looked up where the file is mapped, without reading the rest;
//   - the delta: the findings of the checks run on the summaries, each
//     check's apart, with the notes commit and HEAD they are of, and the
//     summaries added since the keys were written (none yet).
//
// The next verify, when records were only added since (a record, a fetch, a
// sync: no record changed or removed, none on a commit the ledger had a
// record of, none of a cycle a kept record takes), reads only the notes
// that changed and the commits HEAD gained. It runs the checks on the new
// records, looking the records they name up in the keys section and in what
// was added, and puts their findings among those kept where their cycles
// place them (Finding.at): it costs what was added, not the ledger.
// Anything else (a record changed or removed, a cycle a kept record took, a
// commit found that was missing, HEAD moved other than by a line of
// commits, an acknowledgement, a damaged file) means the full read, whose
// answer is the same (a gc that removes a pack the delta stood for means a
// read from git alone: objectsHold); so does a delta grown past maxDelta, and that
// read writes the keys section anew.

const (
	keysMagic   = "git-evolve verify keys\n"
	keysFormat  = 5
	deltaMagic  = "git-evolve verify delta\n"
	deltaFormat = 5
	// maxDelta bounds the summaries the delta holds.
	maxDelta = 4096
	// maxDeltaFile bounds the delta section read back.
	maxDeltaFile = 64 << 20
)

// deltaState is what the delta section holds.
type deltaState struct {
	Binary         string   // the git-evolve that wrote it (binaryID)
	Token          [16]byte // the keys section it adds to
	Source         gitstore.Hash
	Head           gitstore.Hash // the commit whose trailers Found holds
	Packs          string        // packsID
	History        string        // historyKey
	Accepted       string        // acceptedKey of the records accepted
	Records, Notes int
	// Added are the summaries added since the keys section was written, in
	// sum order.
	Added []recSum
	Found sumFindings
}

// acceptedKey names the records whose change an acknowledgement accepted
// (acceptedIDs): what makes some of the kept findings notices. An accepted
// notes commit fetched since changes it.
func acceptedKey(ids map[string]bool) string {
	sum := sha256.New()
	for _, id := range slices.Sorted(maps.Keys(ids)) {
		fmt.Fprintf(sum, "%d %s\n", len(id), id)
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// deltaRun is a verify that builds on the delta state: what it read of
// the records added since, the findings so far, and the state it leaves.
type deltaRun struct {
	prev  *deltaState
	next  *deltaState
	found *sumFindings
	look  records
	added *sumIndex // the records added since the delta state, filed
	head  gitstore.Hash
	keys  *keysFile
}

// close ends what the verify read of the keys section.
func (d *deltaRun) close() { d.keys.close() }

// readDelta is the verify with o built on the delta state, when it can
// be: nil, with no error, when it cannot (a full read follows).
func readDelta(l *store.Ledger, o VerifyOptions, rd *ledgerReads, accepted map[string]bool, k *keptFile) (*deltaRun, error) {
	if o.noDelta || o.FullHistory || o.FromGit || len(o.Revs) > 0 || len(rd.sources) != 1 || !rd.historyOK {
		return nil, nil
	}
	repo := l.Repo()
	bin, ok := binaryID()
	if !ok {
		return nil, nil
	}
	data := k.section(secDelta)
	if len(data) == 0 || len(data) > maxDeltaFile {
		return nil, nil
	}
	// A copy: what it decodes outlives the mapping.
	st, err := decodeDelta(bytes.Clone(data))
	// A pack added since removes nothing (objectsHold holds every pack the
	// delta stood for), and the commits it found missing are looked up
	// again below: what a pack brings is what loose objects bring.
	if err != nil || st.Binary != bin || st.History != rd.history ||
		st.Accepted != acceptedKey(accepted) || st.Head.IsZero() {
		return nil, nil
	}
	head, there, err := repo.RefHash("HEAD")
	if err != nil || !there {
		return nil, err
	}
	// The commits HEAD gained are checked before the kept ones, as git log
	// lists them when they are a line of commits on the kept HEAD.
	if !repo.Extends(st.Head, head) {
		return nil, nil
	}
	keys, ok := keysIn(k, st.Token)
	if !ok {
		return nil, nil
	}
	d, ok, err := st.advance(repo, rd.sources[0], keys)
	if err != nil || !ok || keys.damaged() {
		keys.close()
		return nil, err
	}
	d.head, d.next.Head = head, head
	gitstore.Tracef("verify: the checks built on the delta %s kept of %s: %d record summaries added since", store.ViewPath(repo), st.Source.Short(), len(d.next.Added)-len(st.Added))
	return d, nil
}

// readBounded reads the file at path when it holds at most max bytes.
func readBounded(path string, max int64) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	return data, err == nil && int64(len(data)) <= max
}

// advance reads what was added to the ledger from st.Source to the notes
// commit to, and runs the checks of the new records' own summaries. ok is
// false when the change is not only additions the delta can take.
func (st *deltaState) advance(repo *gitstore.Repo, to gitstore.Hash, keys *keysFile) (*deltaRun, bool, error) {
	from, err := notesAt(repo, st.Source)
	if err != nil {
		return nil, false, nil // gone: a full read
	}
	next, err := notesAt(repo, to)
	if err != nil {
		return nil, false, nil
	}
	// What cannot be read here is left to the full read, which reads
	// other objects, and says what it cannot read.
	changes, err := next.DiffNotes(from)
	if err != nil {
		return nil, false, nil
	}
	var want []gitstore.Hash
	for _, c := range changes {
		if len(c.Old) > 1 || len(c.New) > 1 {
			// A tree another tool wrote notes the object at two paths:
			// which copy comes first is the tree walk's to say.
			return nil, false, nil
		}
		want = append(append(want, c.Old...), c.New...)
	}
	blobs, err := repo.ReadBlobsKept(want)
	if err != nil {
		return nil, false, nil
	}
	// The summaries each change removed and added: a note rewritten with a
	// record appended removes and adds back the ones it had.
	type copyOf struct {
		key    string
		commit gitstore.Hash
		digest string
	}
	gone := map[copyOf]int{}
	var added []recSum
	var lines []Finding
	changed := map[string]bool{}
	notes := st.Notes
	at := 0
	for _, c := range changes {
		changed[c.Object.String()] = true
		had, has := false, false
		for range c.Old {
			sums, _ := noteSums(c.Object, blobs[at])
			at++
			had = had || len(sums) > 0
			if twoOfOneKey(sums) {
				return nil, false, nil
			}
			for i := range sums {
				gone[copyOf{sums[i].key(), sums[i].Commit, sums[i].Digest}]++
			}
		}
		for range c.New {
			sums, fs := noteSums(c.Object, blobs[at])
			at++
			has = has || len(sums) > 0
			if twoOfOneKey(sums) {
				// Two lines of one record on one commit tie in the
				// summaries' order but for their place in the note: a note
				// rewritten in another order changes which is first.
				return nil, false, nil
			}
			lines = append(lines, fs...)
			for i := range sums {
				k := copyOf{sums[i].key(), sums[i].Commit, sums[i].Digest}
				if gone[k] > 0 {
					gone[k]--
					continue
				}
				added = append(added, sums[i])
			}
		}
		if had && !has {
			notes--
		} else if has && !had {
			notes++
		}
	}
	for _, n := range gone {
		if n > 0 {
			return nil, false, nil // a record changed or removed
		}
	}
	if len(st.Added)+len(added) > maxDelta {
		return nil, false, nil
	}
	prevAdded := (&ledgerSums{Sums: st.Added}).byKey()
	deleted := map[string]bool{} // records named by a prev and not there
	for _, f := range st.Found.Chain {
		if f.Kind == "deleted" {
			deleted[f.ID] = true
		}
	}
	absent := map[gitstore.Hash]bool{}
	for _, f := range st.Found.Absent {
		h, err := gitstore.ParseHash(f.Commit)
		if err != nil {
			return nil, false, nil
		}
		absent[h] = true
	}
	for i := range added {
		s := &added[i]
		k := s.key()
		if keys.hasCycle(s.Cycle) || slices.ContainsFunc(st.Added, func(r recSum) bool { return r.Cycle == s.Cycle }) {
			return nil, false, nil // a cycle a kept record took: their collision is the full read's
		}
		if _, ok := prevAdded.first[k]; ok || deleted[k] || absent[s.Commit] {
			return nil, false, nil
		}
		if _, ok := keys.find(k); ok {
			return nil, false, nil
		}
	}
	// Whether the new records' commits are here, and the missing ones
	// still missing: one exchange with git.
	var objs []gitstore.Hash
	for h := range absent {
		objs = append(objs, h)
	}
	for i := range added {
		objs = append(objs, added[i].Commit)
	}
	types, err := repo.ObjectTypes(objs)
	if err != nil {
		return nil, false, nil
	}
	for i := 0; i < len(absent); i++ {
		if types[i] != "" {
			return nil, false, nil // fetched since
		}
	}
	for i := range added {
		t := types[len(absent)+i]
		added[i].Absent, added[i].NotCommit = t == "", t != "" && t != "commit"
	}
	ls := &ledgerSums{Sums: added}
	ls.sort()
	x := ls.byKey()
	found := st.Found.copy()
	keep := found.Lines[:0]
	for _, f := range found.Lines {
		if !changed[f.Commit] {
			keep = append(keep, f)
		}
	}
	found.Lines = append(keep, lines...)
	slices.SortStableFunc(found.Lines, func(a, b Finding) int { return strings.Compare(a.Commit, b.Commit) })
	// The new records' findings go among the kept ones where their cycles
	// put them, as a full read's order does: no kept record has their
	// cycles.
	fresh := &sumFindings{}
	fresh.check(ls.Sums, x)
	for i, part := range fresh.parts()[1:] {
		kept := found.parts()[1+i]
		*kept = mergeAt(*kept, *part)
	}
	nx := *st
	nx.Source = to
	nx.Notes = notes
	nx.Records = st.Records + x.keys()
	nx.Added = mergeSums(slices.Clip(st.Added), ls.Sums)
	nx.Found = *found
	return &deltaRun{prev: st, next: &nx, found: &nx.Found, added: x, keys: keys,
		look: chainLookup{x, prevAdded, keys}}, true, nil
}

// twoOfOneKey says whether one note's summaries hold a key twice.
func twoOfOneKey(sums []recSum) bool {
	seen := make(map[string]bool, len(sums))
	for i := range sums {
		if k := sums[i].key(); seen[k] {
			return true
		} else {
			seen[k] = true
		}
	}
	return false
}

// mergeAt merges b into a, each in the order of the findings' places
// (Finding.at), a's first where two take one place.
func mergeAt(a, b []Finding) []Finding {
	if len(b) == 0 {
		return a
	}
	out := make([]Finding, 0, len(a)+len(b))
	for len(a) > 0 && len(b) > 0 {
		if b[0].at < a[0].at {
			out, b = append(out, b[0]), b[1:]
		} else {
			out, a = append(out, a[0]), a[1:]
		}
	}
	return append(append(out, a...), b...)
}

// copy copies fs, so that what is added to it is not added to fs.
func (fs *sumFindings) copy() *sumFindings {
	c := *fs
	for _, p := range []*[]Finding{&c.Lines, &c.Schema, &c.IDs, &c.NotCommit, &c.Absent, &c.Numbers, &c.Chain} {
		*p = slices.Clone(*p)
	}
	c.Trailers = slices.Clone(c.Trailers)
	return &c
}

// gainedTrailers reads the commits HEAD gained since the delta state's
// HEAD whose trailers name a cycle.
func (d *deltaRun) gainedTrailers(repo *gitstore.Repo) ([]trailerSum, gitstore.Hash, error) {
	if d.head == d.prev.Head {
		return nil, d.head, nil
	}
	commits, err := repo.TrailerLog("Evolve-Result", trailerKeys, d.head.String(), "^"+d.prev.Head.String())
	return trailerSums(commits), d.head, err
}

// checkChainAndTrailers runs the chain check on the new records and the
// trailer check on the commits HEAD gained (newest first, before the
// kept ones), and checks again a kept commit that named a record the
// ledger did not have when that record was added since.
func (d *deltaRun) checkChainAndTrailers(gained []trailerSum, ids map[string]bool) {
	fs := d.found
	fs.Chain = mergeAt(fs.Chain, collect(func(r *Report) { fs.Unchained += checkChain(r, d.added, d.look, ids) }))
	trailers := checkTrailers(gained, d.look, ids)
	for _, t := range fs.Trailers {
		if _, now := d.added.first[t.Trailer.ID]; now && t.Finding.Kind == "unrecorded" {
			if f, ok := checkTrailer(t.Trailer, d.look, ids); ok {
				trailers = append(trailers, trailerFinding{t.Trailer, f})
			}
			continue
		}
		trailers = append(trailers, t)
	}
	fs.Trailers = trailers
}

// toKeep is what the verify leaves: the state and the keys as they were,
// and the delta state it made.
func (d *deltaRun) toKeep() keptParts {
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	encodeDelta(w, d.next)
	w.Flush()
	return keptParts{secState: {Kept: true}, secKeys: {Kept: true}, secDelta: {Bytes: b.Bytes()}}
}

// chainLookup looks a record up in the new records, those added before
// since the keys section, and the keys section: a record is in one of them.
type chainLookup struct {
	added, prevAdded *sumIndex
	keys             *keysFile
}

func (c chainLookup) firstOf(key string) (*recSum, bool) {
	if r, ok := c.added.firstOf(key); ok {
		return r, true
	}
	if r, ok := c.prevAdded.firstOf(key); ok {
		return r, true
	}
	e, ok := c.keys.find(key)
	if !ok {
		return nil, false
	}
	return &e.first, true
}

func (c chainLookup) on(key string, h gitstore.Hash) bool {
	if c.added.on(key, h) || c.prevAdded.on(key, h) {
		return true
	}
	e, _ := c.keys.find(key)
	return slices.Contains(e.commits, h)
}

func (c chainLookup) holds(key, digest string) bool {
	if c.added.holds(key, digest) || c.prevAdded.holds(key, digest) {
		return true
	}
	e, _ := c.keys.find(key)
	return slices.Contains(e.digests, digest)
}

func (c chainLookup) commitsOf(key string) []gitstore.Hash {
	out := append(c.added.commitsOf(key), c.prevAdded.commitsOf(key)...)
	e, _ := c.keys.find(key)
	return append(out, e.commits...)
}

// writtenKeys is a keys section a verify writes: its token, the index of
// the summaries it files, and the delta state that adds to it.
type writtenKeys struct {
	token [16]byte
	x     *sumIndex
	delta *deltaState
}

// keysToKeep is the keys section of the summaries in ls (filed in x), with
// the delta state of the findings found, with nothing added yet: nil when
// no keys can be kept.
func keysToKeep(rd *ledgerReads, accepted map[string]bool, source gitstore.Hash, ls *ledgerSums, x *sumIndex, head gitstore.Hash, found *sumFindings) *writtenKeys {
	bin, ok := binaryID()
	if !ok || !rd.historyOK || head.IsZero() {
		return nil
	}
	for i := range ls.Sums {
		// A key or digest the keys could not give back would read as a
		// record the ledger lacks.
		if r := &ls.Sums[i]; len(r.key()) > maxStateString || len(r.Digest) > maxStateString ||
			len(r.Result) > maxStateString || len(r.CommitDigest) > maxStateString {
			return nil
		}
	}
	st := &deltaState{Binary: bin, Source: source, Head: head, Packs: rd.packs, History: rd.history,
		Accepted: acceptedKey(accepted), Records: x.keys(), Notes: ls.Notes, Found: *found}
	if _, err := rand.Read(st.Token[:]); err != nil {
		return nil
	}
	return &writtenKeys{token: st.Token, x: x, delta: st}
}

// The keys section: the magic line, the format (uvarint), the block size
// (uvarint), the token (16 bytes), the entries, the table (each slot the
// offset in the file of a key's entry, 4 bytes little endian, 0 when empty:
// keys are placed by keyHash, modulo the table's size, and probed
// linearly), the table's size in slots (3 for each 2 keys and 16, 4 bytes
// little endian), the cycles the records take (each once, in order, 4
// bytes little endian each when every one fits in 32 bits, else 8), their
// count (4 bytes), the width of a cycle (4 bytes); then the CRC-32C of each
// block of that much of the file, from its first byte (4 bytes little
// endian each), their count (4 bytes), and the CRC-32C of those sums and
// their count. An entry: the key (stateWriter.key), its first summary's
// cycle, result and commit digest, the count of its summaries, and each
// one's commit and digest, in the compact forms of keptfields.go. The
// entries are written as they are made, in the order of each key's first
// summary (the state reads the fields of those summaries from them, in
// that order); the table follows them, so that the file is written in one
// pass.
//
// A block is checked the first time a lookup reads in it, not when the
// file is opened: a verify after a few records reads a few hundred of the
// file's blocks, where summing all of it (17 MB at 100,000 records) cost
// more than the rest of that verify's own work. A damaged block found
// marks the file damaged (keysFile.damaged), and the verify that read it
// is made again as a full read.

// keysBlock is the size of the blocks the keys section is checked by; the
// file says the size it was written with.
var keysBlock = 4096

// keyEntry is what the keys section holds of one record.
type keyEntry struct {
	first   recSum // Commit, Digest, Cycle, Result, CommitDigest, CommitBin
	commits []gitstore.Hash
	digests []string
}

// keyHash is FNV-1a, 64 bits.
func keyHash(key string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(key); i++ {
		h ^= uint64(key[i])
		h *= 1099511628211
	}
	return h
}

// blockSums is the writer of a keys section: what it writes goes on to w,
// and is summed by block.
type blockSums struct {
	w     *bufio.Writer
	block int
	in    int // bytes of the current block written
	sum   uint32
	sums  []byte
	at    int // bytes written
}

func (b *blockSums) Write(p []byte) (int, error) {
	n := len(p)
	b.at += n
	b.w.Write(p)
	for len(p) > 0 {
		k := min(len(p), b.block-b.in)
		b.sum = crc32.Update(b.sum, castagnoliTable(), p[:k])
		b.in += k
		p = p[k:]
		if b.in == b.block {
			b.sums = binary.LittleEndian.AppendUint32(b.sums, b.sum)
			b.in, b.sum = 0, 0
		}
	}
	return n, nil
}

// end writes the sums of the blocks, their count and the sum of those.
func (b *blockSums) end() {
	if b.in > 0 {
		b.sums = binary.LittleEndian.AppendUint32(b.sums, b.sum)
	}
	tail := binary.LittleEndian.AppendUint32(b.sums, uint32(len(b.sums)/4))
	b.w.Write(tail)
	b.w.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(tail, castagnoliTable())))
}

// keySlots is the size of the table of a keys section of n keys: a third of
// its slots empty, so that a lookup of a key the file lacks probes a few.
func keySlots(n int) uint64 { return uint64(n + n/2 + 16) }

// slotOf is the slot a key of hash h starts its probe at, of slots: the
// remainder, which every bit of h changes (the high bits of FNV-1a differ
// little between keys that differ in their last bytes).
func slotOf(h, slots uint64) uint64 { return h % slots }

func encodeKeys(w *bufio.Writer, token [16]byte, x *sumIndex) {
	slots := keySlots(x.keys())
	table := make([]uint32, slots)
	b := &blockSums{w: w, block: keysBlock}
	b.Write([]byte(keysMagic))
	b.Write(binary.AppendUvarint(nil, keysFormat))
	b.Write(binary.AppendUvarint(nil, uint64(keysBlock)))
	b.Write(token[:])
	// Each entry's offset is what was written and what is buffered.
	ew := stateWriter{bufio.NewWriterSize(b, 64<<10), new(writeScratch)}
	x.each(func(es []*recSum) {
		k := es[0].key()
		i := slotOf(keyHash(k), slots)
		for table[i] != 0 {
			if i++; i == slots {
				i = 0
			}
		}
		table[i] = uint32(b.at + ew.w.Buffered())
		ew.key(k)
		ew.int(es[0].Cycle)
		ew.result(es[0].Result)
		ew.commitDigest(es[0])
		ew.uint(uint64(len(es)))
		for _, e := range es {
			ew.hash(e.Commit)
			ew.hexField(e.Digest, "", digestHex)
		}
	})
	ew.w.Flush()
	tail := make([]byte, 0, 4*slots+4)
	for _, off := range table {
		tail = binary.LittleEndian.AppendUint32(tail, off)
	}
	tail = binary.LittleEndian.AppendUint32(tail, uint32(slots))
	// The cycles the records take, each once, in order (the summaries are
	// in cycle order), in 4 bytes each when all fit.
	width := 4
	for i := range x.sums {
		if c := x.sums[i].Cycle; c != int(int32(c)) {
			width = 8
		}
	}
	n := 0
	for i := range x.sums {
		if c := x.sums[i].Cycle; i == 0 || c != x.sums[i-1].Cycle {
			if width == 4 {
				tail = binary.LittleEndian.AppendUint32(tail, uint32(int32(c)))
			} else {
				tail = binary.LittleEndian.AppendUint64(tail, uint64(int64(c)))
			}
			n++
		}
	}
	tail = binary.LittleEndian.AppendUint32(tail, uint32(n))
	tail = binary.LittleEndian.AppendUint32(tail, uint32(width))
	b.Write(tail)
	b.end()
}

// castagnoliTable is the CRC-32C table: the keys and delta sections carry the
// checksum of what follows their header, so that a file damaged in place
// is read past, never taken for a ledger without some record.
// hash/crc32 makes it once, at the first call, not when the process
// starts: making it costs about 0.25 ms, and most commands never use it.
func castagnoliTable() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) }

func appendStr(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// keysFile is a keys section, held until close. It is read by several
// goroutines of one verify at once.
type keysFile struct {
	kept        *keptFile
	mapped      []byte // the whole section
	covered     int    // the bytes the block sums cover
	block       int
	sums        []byte // each block's CRC-32C
	entries     int    // where the entries start
	tableStart  int
	slots       uint64
	cyclesStart int // the cycles the records take, in order
	cycles      int
	width       int // of a cycle: 4 or 8 bytes

	mu      sync.Mutex
	checked []bool // the blocks found sound
	bad     bool   // a block was found damaged
}

// keysIn is the keys section of kept, when it is one of token; it holds
// kept until close.
func keysIn(kept *keptFile, token [16]byte) (*keysFile, bool) {
	k, ok := parseKeys(kept.section(secKeys), token)
	if ok {
		k.kept = kept.retain()
	}
	return k, ok
}

// parseKeys checks the file's block sums, its first block, and the blocks
// of the places it reads the table's and the cycles' sizes from; the
// rest is checked as it is read.
func parseKeys(data []byte, token [16]byte) (*keysFile, bool) {
	n := len(data)
	if n < 8 {
		return nil, false
	}
	nsums := int(binary.LittleEndian.Uint32(data[n-8:]))
	if nsums < 1 || nsums > (n-8)/4 {
		return nil, false
	}
	sumsStart := n - 8 - 4*nsums
	if crc32.Checksum(data[sumsStart:n-4], castagnoliTable()) != binary.LittleEndian.Uint32(data[n-4:]) {
		return nil, false
	}
	k := &keysFile{mapped: data, covered: sumsStart, sums: data[sumsStart : n-8], checked: make([]bool, nsums)}
	rest, ok := cutPrefix(data, keysMagic)
	if !ok {
		return nil, false
	}
	s := &stateReader{b: rest}
	format, block := s.uint(), s.uint()
	if format != keysFormat || s.err != nil || block < 64 || block > 1<<20 {
		return nil, false
	}
	k.block = int(block)
	if (k.covered+k.block-1)/k.block != nsums {
		return nil, false
	}
	headEnd := len(data) - len(s.b) + len(token)
	if headEnd+12 > k.covered || !k.sound(0, headEnd) || [16]byte(data[headEnd-16:headEnd]) != token {
		return nil, false
	}
	// From the end: the cycles' width and count, the cycles, the table's
	// size, the table.
	width, ok := k.uint32(k.covered - 4)
	if !ok || (width != 4 && width != 8) {
		return nil, false
	}
	k.width = int(width)
	c, ok := k.uint32(k.covered - 8)
	if !ok || uint64(c) > uint64((k.covered-8-headEnd)/k.width) {
		return nil, false
	}
	k.cycles = int(c)
	k.cyclesStart = k.covered - 8 - k.width*k.cycles
	slots, ok := k.uint32(k.cyclesStart - 4)
	if !ok || slots == 0 || int(slots) > (k.cyclesStart-4-headEnd)/4 {
		return nil, false
	}
	k.slots = uint64(slots)
	k.entries = headEnd
	k.tableStart = k.cyclesStart - 4 - 4*int(slots)
	return k, true
}

// sound says whether the n bytes at off lie in blocks whose sums hold,
// checking the blocks not checked yet; a block that does not hold marks
// the file damaged.
func (k *keysFile) sound(off, n int) bool {
	if off < 0 || n < 0 || off+n > k.covered {
		return k.fail() // an offset out of the file
	}
	if n == 0 {
		return true
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.bad {
		return false
	}
	for b := off / k.block; b <= (off+n-1)/k.block; b++ {
		if k.checked[b] {
			continue
		}
		start := b * k.block
		end := min(start+k.block, k.covered)
		if crc32.Checksum(k.mapped[start:end], castagnoliTable()) != binary.LittleEndian.Uint32(k.sums[4*b:]) {
			k.bad = true
			return false
		}
		k.checked[b] = true
	}
	return true
}

// fail marks the file damaged: what it holds is not what it was written
// with (a parse that fails in sound blocks is too).
func (k *keysFile) fail() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.bad = true
	return false
}

func (k *keysFile) uint32(off int) (uint32, bool) {
	if !k.sound(off, 4) {
		return 0, false
	}
	return binary.LittleEndian.Uint32(k.mapped[off:]), true
}

// damaged says whether a lookup read in a block found damaged: its answer
// may be wrong, and the verify that asked is made again as a full read.
func (k *keysFile) damaged() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.bad
}

// hasCycle says whether a record the file holds takes cycle n (false, and
// the file damaged, when a block it reads is).
func (k *keysFile) hasCycle(n int) bool {
	at := func(i int) int64 {
		off := k.cyclesStart + k.width*i
		if !k.sound(off, k.width) {
			return 0
		}
		if k.width == 4 {
			return int64(int32(binary.LittleEndian.Uint32(k.mapped[off:])))
		}
		return int64(binary.LittleEndian.Uint64(k.mapped[off:]))
	}
	i := sort.Search(k.cycles, func(i int) bool { return at(i) >= int64(n) })
	return i < k.cycles && at(i) == int64(n)
}

// close lets the file go: nothing read from the section points into it.
// A long-lived process (git evolve mcp) verifies many times.
func (k *keysFile) close() {
	k.kept.release()
	k.kept, k.mapped, k.sums, k.checked = nil, nil, nil, nil
}

func cutPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return nil, false
	}
	return b[len(prefix):], true
}

// find looks key up. A damaged entry is not found, and marks the file
// damaged.
func (k *keysFile) find(key string) (keyEntry, bool) {
	i := slotOf(keyHash(key), k.slots)
	for n := uint64(0); n < k.slots; n++ {
		off32, ok := k.uint32(k.tableStart + 4*int(i))
		off := int(off32)
		if !ok || off == 0 {
			return keyEntry{}, false
		}
		if off < k.entries || off >= k.tableStart {
			return keyEntry{}, k.fail() // a table sound in its sums that names no entry
		}
		entries := k.mapped[off:k.tableStart]
		// The key is read as the lookup needs it, without a copy.
		s := &stateReader{b: entries}
		got := s.key()
		if s.err != nil {
			return keyEntry{}, k.fail()
		}
		if !k.sound(off, len(entries)-len(s.b)) {
			return keyEntry{}, false
		}
		if got == key {
			s.copy = true
			e, ok := s.keyEntry()
			if !ok {
				return keyEntry{}, k.fail()
			}
			if !k.sound(off, len(entries)-len(s.b)) {
				return keyEntry{}, false
			}
			return e, true
		}
		if i++; i == k.slots {
			i = 0
		}
	}
	return keyEntry{}, false
}

// entryHead reads an entry's key, its first summary's cycle, result and
// commit digest, and the count of its summaries, whose commits and digests
// follow.
func (s *stateReader) entryHead() (key string, first recSum, n int) {
	key = s.key()
	first.Cycle = s.int()
	first.Result = s.result()
	first.CommitDigest, first.CommitBin = s.commitDigest()
	n = s.count()
	if s.err == nil && (n == 0 || n > len(s.b)) {
		s.err = errBadState
	}
	return key, first, n
}

// keyEntry reads the rest of an entry, after its key. The reader copies
// (s.copy): the mapping is undone when the verify ends (close).
func (s *stateReader) keyEntry() (keyEntry, bool) {
	var e keyEntry
	e.first.Cycle = s.int()
	e.first.Result = s.result()
	e.first.CommitDigest, e.first.CommitBin = s.commitDigest()
	n := s.count()
	if s.err != nil || n == 0 || n > len(s.b) {
		return keyEntry{}, false
	}
	for i := 0; i < n && s.err == nil; i++ {
		e.commits = append(e.commits, s.hash())
		e.digests = append(e.digests, s.hexField("", digestHex))
	}
	if s.err != nil {
		return keyEntry{}, false
	}
	e.first.Commit, e.first.Digest = e.commits[0], e.digests[0]
	return e, true
}

// The delta section: the magic line, the format (uvarint), the CRC-32C of the
// rest (4 bytes little endian), then in the layout of the state section the
// fields of deltaState.

func encodeDelta(w *bufio.Writer, st *deltaState) {
	var body bytes.Buffer
	bw := bufio.NewWriter(&body)
	encodeDeltaBody(bw, st)
	bw.Flush()
	w.WriteString(deltaMagic)
	w.Write(binary.AppendUvarint(nil, deltaFormat))
	w.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(body.Bytes(), castagnoliTable())))
	w.Write(body.Bytes())
}

func encodeDeltaBody(w *bufio.Writer, st *deltaState) {
	s := stateWriter{w, new(writeScratch)}
	s.str(st.Binary)
	w.Write(st.Token[:])
	s.hash(st.Source)
	s.hash(st.Head)
	s.str(st.Packs)
	s.str(st.History)
	s.str(st.Accepted)
	s.uint(uint64(st.Records))
	s.uint(uint64(st.Notes))
	s.uint(uint64(len(st.Added)))
	sw := newSumWriter(s)
	for i := range st.Added {
		sw.sum(&st.Added[i], false)
	}
	fs := &st.Found
	for _, part := range fs.parts() {
		s.uint(uint64(len(*part)))
		for i := range *part {
			s.finding(&(*part)[i])
		}
	}
	s.uint(uint64(fs.Unchained))
	s.uint(uint64(len(fs.Trailers)))
	for i := range fs.Trailers {
		s.trailer(&fs.Trailers[i].Trailer)
		s.finding(&fs.Trailers[i].Finding)
	}
}

// parts are the findings of each check, in the file's order.
func (fs *sumFindings) parts() []*[]Finding {
	return []*[]Finding{&fs.Lines, &fs.Schema, &fs.IDs, &fs.NotCommit, &fs.Absent, &fs.Numbers, &fs.Chain}
}

var errBadDelta = errors.New("the delta verify kept is damaged")

func decodeDelta(data []byte) (*deltaState, error) {
	rest, ok := cutPrefix(data, deltaMagic)
	if !ok {
		return nil, errBadDelta
	}
	s := &stateReader{b: rest, strs: map[string]string{}}
	if s.uint() != deltaFormat || s.err != nil || len(s.b) < 4 {
		return nil, errBadDelta
	}
	sum := binary.LittleEndian.Uint32(s.b)
	if s.b = s.b[4:]; crc32.Checksum(s.b, castagnoliTable()) != sum {
		return nil, errBadDelta
	}
	st := &deltaState{}
	st.Binary = s.str()
	if len(s.b) < len(st.Token) {
		return nil, errBadDelta
	}
	st.Token = [16]byte(s.b[:16])
	s.b = s.b[16:]
	st.Source = s.hash()
	st.Head = s.hash()
	st.Packs = s.str()
	st.History = s.str()
	st.Accepted = s.str()
	st.Records = s.count()
	st.Notes = s.count()
	n := s.count()
	if n > maxDelta {
		return nil, errBadDelta
	}
	sr := &sumReader{stateReader: s}
	for i := 0; i < n && s.err == nil; i++ {
		st.Added = append(st.Added, sr.sum())
	}
	for _, part := range st.Found.parts() {
		n := s.count()
		for i := 0; i < n && s.err == nil; i++ {
			*part = append(*part, s.finding())
		}
	}
	st.Found.Unchained = s.count()
	n = s.count()
	for i := 0; i < n && s.err == nil; i++ {
		t := s.trailer()
		st.Found.Trailers = append(st.Found.Trailers, trailerFinding{t, s.finding()})
	}
	if s.err != nil {
		return nil, s.err
	}
	if len(s.b) != 0 {
		return nil, errBadDelta
	}
	return st, nil
}

func (s stateWriter) finding(f *Finding) {
	for _, v := range []string{string(f.Severity), f.Kind, f.Message, f.ID, f.Commit, f.NotesCommit, f.Original, f.Ref, strings.Join(f.Commits, " ")} {
		s.str(v)
	}
	s.int(f.Cycle)
	s.int(f.at)
}

func (s *stateReader) finding() Finding {
	f := Finding{Severity: Severity(s.shared()), Kind: s.shared(), Message: s.str(), ID: s.str(), Commit: s.str(),
		NotesCommit: s.str(), Original: s.str(), Ref: s.str()}
	if commits := s.str(); commits != "" {
		f.Commits = strings.Fields(commits)
	}
	f.Cycle = s.int()
	f.at = s.int()
	if s.err == nil && f.Severity != Breach && f.Severity != Notice {
		s.err = fmt.Errorf("%w: a finding of severity %q", errBadDelta, f.Severity)
	}
	return f
}
