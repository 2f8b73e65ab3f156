package audit

import (
	"encoding/hex"
	"strings"
	"unsafe"
)

// The compact forms of a summary's fields that verify's kept files
// (the state, the keys and the delta verify keeps) share. A record's fields are
// untrusted input: each form is a shape the writers of the ledger give
// them (an id of 20 hex digits, a digest of 32, "sha256:" and 64), kept in
// binary, and anything else kept as it is, so that every string reads back
// byte for byte.

// Shapes of a string field: the uvarint written before it.
const (
	shapeRaw = 0 // a uvarint length and the bytes
	shapeHex = 1 // its lower-case hex digits, in binary
	// shapeNoID is a key of a record with no id: noID and its digest's
	// 32 hex digits, in binary.
	shapeNoID = 2
	// shapeLink is a prev link "<id>:<digest>" of 20 and 32 hex digits.
	shapeLink = 3
)

const (
	idHex      = 20 // the hex digits of an id git-evolve writes
	digestHex  = 32 // of ledger.Digest
	sha256Hex  = 64 // of ledger.CommitDigest, after its prefix
	sha256Pref = "sha256:"
)

// resultCodes are the results kept as one byte: the ledger's, in the
// order of this format (a new result is kept as text until the format
// takes it).
var resultCodes = []string{"improved", "regressed", "unchanged", "harvested", "quarantined", "context-handoff"}

// hexValue is the value of each lower-case hex digit, 0xff for every
// other byte.
var hexValue = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i, c := range "0123456789abcdef" {
		t[c] = byte(i)
	}
	return t
}()

// fromHex decodes s, n lower-case hex digits (the text that
// hex.EncodeToString gives back exactly), into dst; false when s is not.
func fromHex(dst []byte, s string, n int) bool {
	if len(s) != n || len(dst) < n/2 || n%2 != 0 {
		return false
	}
	var bad byte
	for i := 0; i < n/2; i++ {
		hi, lo := hexValue[s[2*i]], hexValue[s[2*i+1]]
		bad |= hi | lo
		dst[i] = hi<<4 | lo&15
	}
	return bad&0xf0 == 0
}

// toHex writes the lower-case hex digits of src to dst (hex.Encode).
func toHex(dst, src []byte) { hex.Encode(dst, src) }

// hexField writes s, which is prefix and n hex digits when the ledger's
// writers made it, as binary when it is, else as it is.
func (s stateWriter) hexField(v, prefix string, n int) {
	buf := s.tmp[scratchHex:]
	if rest, ok := strings.CutPrefix(v, prefix); ok && fromHex(buf, rest, n) {
		s.uint(shapeHex)
		s.w.Write(buf[:n/2])
		return
	}
	s.uint(shapeRaw)
	s.str(v)
}

// commitDigest writes a summary's commit digest: its 32 bytes
// (shapeHex) when it is kept so, else its text.
func (s stateWriter) commitDigest(r *recSum) {
	if r.CommitBin && len(r.CommitDigest) == sha256Hex/2 {
		s.uint(shapeHex)
		s.w.WriteString(r.CommitDigest)
		return
	}
	s.uint(shapeRaw)
	s.str(r.CommitDigest)
}

// key writes a record's key (recSum.key): an id, a noID key, or text.
func (s stateWriter) key(k string) {
	buf := s.tmp[scratchHex : scratchHex+digestHex/2]
	if d, ok := strings.CutPrefix(k, noID); ok && fromHex(buf, d, digestHex) {
		s.uint(shapeNoID)
		s.w.Write(buf)
		return
	}
	s.hexField(k, "", idHex)
}

// link writes a prev link.
func (s stateWriter) link(v string) {
	buf := s.tmp[scratchHex : scratchHex+(idHex+digestHex)/2]
	id, d, ok := strings.Cut(v, ":")
	if ok && fromHex(buf, id, idHex) && fromHex(buf[idHex/2:], d, digestHex) {
		s.uint(shapeLink)
		s.w.Write(buf)
		return
	}
	s.uint(shapeRaw)
	s.str(v)
}

// result writes a result: its code, or past the codes the length of its
// text and the text.
func (s stateWriter) result(v string) {
	for i, c := range resultCodes {
		if v == c {
			s.uint(uint64(i))
			return
		}
	}
	s.uint(uint64(len(resultCodes) + len(v)))
	s.w.WriteString(v)
}

// alloc gives n bytes for the text of the strings read: out of a chunk
// shared by many, not one allocation each.
func (s *stateReader) alloc(n int) []byte {
	if len(s.arena) < n {
		s.arena = make([]byte, max(n, 64<<10))
	}
	b := s.arena[:n:n]
	s.arena = s.arena[n:]
	return b
}

// text is what a string read points into: the file's bytes, or a copy
// when the file's mapping is undone before the strings are let go
// (s.copy).
func (s *stateReader) text(v string) string {
	if !s.copy || v == "" {
		return v
	}
	b := s.alloc(len(v))
	copy(b, v)
	return unsafe.String(&b[0], len(b))
}

// raw reads a string as str does, copied when s.copy says so.
func (s *stateReader) raw() string { return s.text(s.str()) }

// hexText reads n bytes and gives back prefix and their hex digits.
func (s *stateReader) hexText(prefix string, n int) string {
	if s.err != nil || len(s.b) < n {
		s.err = errBadState
		return ""
	}
	b := s.alloc(len(prefix) + 2*n)
	copy(b, prefix)
	toHex(b[len(prefix):], s.b[:n])
	s.b = s.b[n:]
	return unsafe.String(&b[0], len(b))
}

// shape reads the shape of a field, one of those allowed.
func (s *stateReader) shape(allowed ...uint64) uint64 {
	v := s.uint()
	for _, a := range allowed {
		if v == a && s.err == nil {
			return v
		}
	}
	s.err = errBadState
	return 0
}

// hexField reads what stateWriter.hexField wrote.
func (s *stateReader) hexField(prefix string, n int) string {
	if s.shape(shapeRaw, shapeHex) == shapeHex {
		return s.hexText(prefix, n/2)
	}
	return s.raw()
}

// commitDigest reads what stateWriter.commitDigest wrote, and whether it
// is the 32 bytes (recSum.CommitBin): they point into the file's bytes
// too, unless s.copy.
func (s *stateReader) commitDigest() (string, bool) {
	if s.shape(shapeRaw, shapeHex) == shapeRaw {
		return s.raw(), false
	}
	if s.err != nil || len(s.b) < sha256Hex/2 {
		s.err = errBadState
		return "", false
	}
	v := unsafe.String(&s.b[0], sha256Hex/2)
	s.b = s.b[sha256Hex/2:]
	return s.text(v), true
}

// key reads what stateWriter.key wrote.
func (s *stateReader) key() string {
	switch s.shape(shapeRaw, shapeHex, shapeNoID) {
	case shapeHex:
		return s.hexText("", idHex/2)
	case shapeNoID:
		return s.hexText(noID, digestHex/2)
	}
	return s.raw()
}

// link reads what stateWriter.link wrote.
func (s *stateReader) link() string {
	if s.shape(shapeRaw, shapeLink) == shapeRaw {
		return s.raw()
	}
	if s.err != nil || len(s.b) < (idHex+digestHex)/2 {
		s.err = errBadState
		return ""
	}
	b := s.alloc(idHex + 1 + digestHex)
	toHex(b, s.b[:idHex/2])
	b[idHex] = ':'
	toHex(b[idHex+1:], s.b[idHex/2:(idHex+digestHex)/2])
	s.b = s.b[(idHex+digestHex)/2:]
	return unsafe.String(&b[0], len(b))
}

// result reads what stateWriter.result wrote.
func (s *stateReader) result() string {
	v := s.uint()
	if s.err != nil {
		return ""
	}
	if v < uint64(len(resultCodes)) {
		return resultCodes[v]
	}
	n := v - uint64(len(resultCodes))
	if n > maxStateString || n > uint64(len(s.b)) {
		s.err = errBadState
		return ""
	}
	r := string(s.b[:n]) // most results are codes: a copy costs little
	s.b = s.b[n:]
	return r
}

// Each summary starts with a uvarint of these flags; the fields a flag
// stands for are not written.
const (
	// sumKeyed: its commit, id, digest, cycle, result and commit digest
	// are those of the keys section's next entry (the state only: the
	// first summary of each key, when the verify wrote the keys section).
	sumKeyed = 1 << iota
	sumChained
	sumAbsent
	sumNotCommit
	// sumNoID: its id is empty (keyed: the key is noID and the digest).
	sumNoID
	// sumPrevLink: its prev link names the summary before it (its id and
	// digest), as a record's names the one written before it.
	sumPrevLink
	sumSameTime // its timestamp is that of the summary before
	sumSameBy   // who recorded it and where are those of the summary before
	sumFlags    = 1<<iota - 1
)

// sumWriter writes summaries in order: each is written as it differs from
// the one before, and the names of who recorded them and where once each.
type sumWriter struct {
	stateWriter
	prev  *recSum
	names map[string]uint64 // each name written, by its number
}

func newSumWriter(s stateWriter) *sumWriter {
	return &sumWriter{stateWriter: s, prev: &recSum{}, names: map[string]uint64{}}
}

// sum writes r; keyed says the keys section's next entry holds its commit,
// id, digest, cycle, result and commit digest.
func (w *sumWriter) sum(r *recSum, keyed bool) {
	p := w.prev
	var f uint64
	set := func(flag uint64, b bool) {
		if b {
			f |= flag
		}
	}
	set(sumKeyed, keyed)
	set(sumChained, r.Chained)
	set(sumAbsent, r.Absent)
	set(sumNotCommit, r.NotCommit)
	set(sumNoID, r.ID == "")
	set(sumPrevLink, r.Prev != "" && len(r.Prev) == len(p.ID)+1+len(p.Digest) &&
		r.Prev[:len(p.ID)] == p.ID && r.Prev[len(p.ID)] == ':' && r.Prev[len(p.ID)+1:] == p.Digest)
	set(sumSameTime, r.Timestamp == p.Timestamp)
	set(sumSameBy, r.By == p.By && r.Host == p.Host)
	w.uint(f)
	if !keyed {
		w.hash(r.Commit)
		if r.ID != "" {
			w.hexField(r.ID, "", idHex)
		}
		w.hexField(r.Digest, "", digestHex)
		w.int(r.Cycle)
		w.result(r.Result)
		w.commitDigest(r)
	}
	w.int(r.V)
	if f&sumSameTime == 0 {
		w.str(r.Timestamp)
	}
	if f&sumPrevLink == 0 {
		w.link(r.Prev)
	}
	if f&sumSameBy == 0 {
		w.name(r.By)
		w.name(r.Host)
	}
	w.prev = r
}

// name writes a name: the number of one written before, or 0 and the
// name.
func (w *sumWriter) name(v string) {
	if n, ok := w.names[v]; ok {
		w.uint(n)
		return
	}
	w.uint(0)
	w.str(v)
	w.names[v] = uint64(len(w.names) + 1)
}

// sumReader reads what a sumWriter wrote.
type sumReader struct {
	*stateReader
	prev  recSum
	names []string
	// keys holds the entries keyed summaries read, in order (nil: none
	// may be keyed); at is where the next one starts.
	keys *keysFile
	at   int
}

func (s *sumReader) sum() recSum {
	var r recSum
	f := s.uint()
	if s.err != nil || f&^sumFlags != 0 {
		s.err = errBadState
		return r
	}
	r.Chained, r.Absent, r.NotCommit = f&sumChained != 0, f&sumAbsent != 0, f&sumNotCommit != 0
	if f&sumKeyed != 0 {
		s.keyed(&r, f&sumNoID != 0)
	} else {
		r.Commit = s.hash()
		if f&sumNoID == 0 {
			if r.ID = s.hexField("", idHex); r.ID == "" {
				s.err = errBadState // written with sumNoID
			}
		}
		r.Digest = s.hexField("", digestHex)
		r.Cycle = s.int()
		r.Result = s.result()
		r.CommitDigest, r.CommitBin = s.commitDigest()
	}
	r.V = s.int()
	if f&sumSameTime != 0 {
		r.Timestamp = s.prev.Timestamp
	} else {
		r.Timestamp = s.raw()
	}
	if f&sumPrevLink != 0 {
		b := s.alloc(len(s.prev.ID) + 1 + len(s.prev.Digest))
		copy(b[copy(b, s.prev.ID):], ":")
		copy(b[len(s.prev.ID)+1:], s.prev.Digest)
		r.Prev = unsafe.String(&b[0], len(b))
	} else {
		r.Prev = s.link()
	}
	if f&sumSameBy != 0 {
		r.By, r.Host = s.prev.By, s.prev.Host
	} else {
		r.By, r.Host = s.name(), s.name()
	}
	if s.err != nil {
		return recSum{}
	}
	s.prev = r
	return r
}

func (s *sumReader) name() string {
	n := s.uint()
	if s.err != nil {
		return ""
	}
	if n == 0 {
		v := s.raw()
		s.names = append(s.names, v)
		return v
	}
	if n > uint64(len(s.names)) {
		s.err = errBadState
		return ""
	}
	return s.names[n-1]
}

// keyed fills r from the keys section's next entry: its first summary.
func (s *sumReader) keyed(r *recSum, empty bool) {
	if s.err != nil {
		return
	}
	if s.keys == nil || s.at >= s.keys.tableStart {
		s.err = errBadState
		return
	}
	// The strings read point into the keys section, which stays mapped.
	e := &stateReader{b: s.keys.mapped[s.at:s.keys.tableStart], arena: s.arena}
	k, first, n := e.entryHead()
	if e.err != nil || n == 0 {
		s.err = errBadState
		return
	}
	r.Commit, r.Digest = e.hash(), e.hexField("", digestHex)
	for range n - 1 { // the other copies: read by their own summaries
		e.hash()
		e.hexField("", digestHex)
	}
	if e.err != nil {
		s.err = errBadState
		return
	}
	s.arena = e.arena
	s.at = s.keys.tableStart - len(e.b)
	r.Cycle, r.Result, r.CommitDigest, r.CommitBin = first.Cycle, first.Result, first.CommitDigest, first.CommitBin
	if empty {
		if k != noID+r.Digest {
			s.err = errBadState
		}
	} else if r.ID = k; k == "" {
		s.err = errBadState
	}
}

// trailer writes a commit's trailers, hex fields as binary.
func (s stateWriter) trailer(t *trailerSum) {
	s.hash(t.Hash)
	s.hexField(t.ID, "", idHex)
	s.str(t.Cycle)
	s.result(t.Result)
	s.hexField(t.Record, sha256Pref, sha256Hex)
}

func (s *stateReader) trailer() trailerSum {
	return trailerSum{Hash: s.hash(), ID: s.hexField("", idHex), Cycle: s.raw(), Result: s.result(),
		Record: s.hexField(sha256Pref, sha256Hex)}
}
