package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// SchemaMajor is the record schema major version this package writes (the
// "v" field). Records with a larger v are reported, never rewritten.
const SchemaMajor = 1

// The results a cycle can have.
const (
	Improved    = "improved"
	Regressed   = "regressed"
	Unchanged   = "unchanged"
	Harvested   = "harvested"
	Quarantined = "quarantined"
	// ContextHandoff is a turn that ended because the agent's context ran
	// out, with .agents/evolve/HANDOFF written for the next (seed 003's
	// Step 7): a local record, as idle ones are, that counts neither as
	// work nor against the loop.
	ContextHandoff = "context-handoff"
)

// Results lists the valid results: the seeds' five in their order, then
// seed 003's context-handoff.
var Results = []string{Improved, Regressed, Unchanged, Harvested, Quarantined, ContextHandoff}

// ValidResult reports whether s is one of Results.
func ValidResult(s string) bool {
	for _, r := range Results {
		if s == r {
			return true
		}
	}
	return false
}

// Productive reports whether a result delivered a commit (improved,
// regressed, harvested): such records are stored as notes and need the
// canonical sha and both goal counts.
func Productive(result string) bool {
	return result == Improved || result == Regressed || result == Harvested
}

// Record is one cycle. Field names are the seeds'. Fields this schema does
// not know are kept in Extra and written back unchanged.
type Record struct {
	V             int
	ID            string
	Cycle         int
	Target        string
	Result        string
	SHA           string
	CanonicalSHA  string
	LogSHA        string
	CycleStartSHA string
	Timestamp     string
	GoalsPassing  *int
	GoalsTotal    *int
	QualityScore  *float64
	IdleStreak    *int
	Parallel      bool
	GoalIDs       []string
	Gate          json.RawMessage // a string such as "PASS" or "FAIL: surface", or an object
	Trace         *Trace
	Extra         map[string]json.RawMessage
}

// Commit is the commit the record names: canonical_sha, else sha.
func (r *Record) Commit() string {
	if r.CanonicalSHA != "" {
		return r.CanonicalSHA
	}
	return r.SHA
}

// ExtraString is the string held by the field name this schema does not
// know, as encoding/json decodes it into a string ("" when the field is
// absent or holds no string). A listing asks it of every record: a plain
// string (no escape, valid UTF-8) is taken as it is, anything else is
// decoded by encoding/json.
func (r *Record) ExtraString(name string) string {
	return jsonString(r.Extra[name])
}

func jsonString(raw []byte) string {
	if len(raw) == 0 {
		return "" // absent
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		inner := raw[1 : n-1]
		plain := utf8.Valid(inner)
		for _, c := range inner {
			if c == '\\' || c == '"' || c < 0x20 {
				plain = false
				break
			}
		}
		if plain {
			return string(inner)
		}
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// GateText is the gate outcome as text ("" when there is none).
func (r *Record) GateText() string {
	var s string
	if len(r.Gate) > 0 && json.Unmarshal(r.Gate, &s) == nil {
		return s
	}
	return string(r.Gate)
}

// Trace is the XP/BDD/TDD evidence of a cycle. All known fields are strings;
// others are kept in Extra.
type Trace struct {
	Fields map[string]string // known fields that are present
	Extra  map[string]json.RawMessage
}

// TraceFields are the known trace fields in the seeds' order.
var TraceFields = [...]string{"goal_hypothesis", "selected_gap", "gherkin", "exemption_reason",
	"first_failing_proof", "red_evidence", "green_evidence", "refactor_note",
	"validation_evidence", "ratchet_action", "goal_reshape"}

// Missing lists the evidence fields the trace lacks (absent or empty), in
// the seeds' order: none when it has an exemption_reason. Completeness is
// advisory: a trace is stored as given, whatever it lacks.
func (t *Trace) Missing() []string {
	if t.Fields["exemption_reason"] != "" {
		return nil
	}
	var missing []string
	for _, k := range TraceFields {
		if k != "exemption_reason" && t.Fields[k] == "" {
			missing = append(missing, k)
		}
	}
	return missing
}

var traceIndex = func() map[string]int {
	m := map[string]int{}
	for i, k := range TraceFields {
		m[k] = i
	}
	return m
}()

// FieldError is a line or value that does not fit the schema; Field names
// the offending field ("" for the line as a whole).
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Reason
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Reason)
}

// legacyFields are field names found in older cycle histories and the
// current names they are read as, in order of precedence.
var legacyFields = [...]struct{ name, current string }{
	{"goal_id", "target"},
	{"commit_sha", "sha"},
	{"commit", "sha"},
	{"started_at", "timestamp"},
}

// knownFields are the record's fields in canonical order.
var knownFields = [...]string{"v", "id", "cycle", "target", "result", "sha", "canonical_sha",
	"log_sha", "cycle_start_sha", "timestamp", "goals_passing", "goals_total", "quality_score",
	"idle_streak", "parallel", "goal_ids", "gate", "trace"}

const numFields = len(knownFields)

var fieldIndex, legacyIndex = func() (map[string]int, map[string]int) {
	f := map[string]int{}
	for i, k := range knownFields {
		f[k] = i
	}
	l := map[string]int{}
	for i, ln := range legacyFields {
		l[ln.name] = i
	}
	return f, l
}()

// Parse reads one record from one JSON object. Legacy names (goal_id,
// commit_sha, and the second writer's commit and started_at) are read as
// their current names when those are absent, and kept as written too;
// fields given as null, "" or false are kept as written. So a record's
// canonical form holds every field of its input. A record without "v" is
// version 1. It returns a *FieldError when the line does not fit the
// schema.
func Parse(line []byte) (Record, error) {
	members, err := topObject(line)
	switch {
	case errors.Is(err, errTrailing):
		return Record{}, &FieldError{Reason: err.Error()}
	case errors.Is(err, errNotObject):
		return Record{}, &FieldError{Reason: "not a JSON object"}
	case err != nil:
		return Record{}, &FieldError{Reason: "not a JSON object: " + err.Error()}
	}
	// Pick out the members by name; a later duplicate wins, as in
	// encoding/json. Unknown members are kept for Extra.
	var f [numFields]json.RawMessage
	var legacyVals [len(legacyFields)]json.RawMessage
	var unknown []member
	for _, m := range members {
		name := m.name(line)
		if i, ok := fieldIndex[string(name)]; ok {
			f[i] = line[m.start:m.end]
			continue
		}
		if i, ok := legacyIndex[string(name)]; ok {
			legacyVals[i] = line[m.start:m.end]
			continue
		}
		unknown = append(unknown, m)
	}
	var raw map[string]json.RawMessage
	if len(unknown) > 0 {
		raw = make(map[string]json.RawMessage, len(unknown))
		for _, m := range unknown {
			raw[m.key(line)] = line[m.start:m.end]
		}
	}
	// Legacy names with a value fill their current name when it is absent
	// (in the order of legacyFields). Every legacy field is also kept as it
	// was written, so that nothing of the input is lost.
	var promoted [numFields]bool
	keepRaw := func(k string, v json.RawMessage) {
		if raw == nil {
			raw = map[string]json.RawMessage{}
		}
		raw[k] = v
	}
	for i, ln := range legacyFields {
		v := legacyVals[i]
		if v == nil {
			continue
		}
		if cur := fieldIndex[ln.current]; absent(f[cur]) && !absent(v) && !promoted[cur] {
			f[cur] = v
			promoted[cur] = true
		}
		keepRaw(ln.name, v)
	}
	// A known field given as null, "" or false (which the canonical form
	// would omit) is kept as it was written, unless a legacy field filled it.
	for i, v := range f {
		if v == nil || promoted[i] || knownFields[i] == "v" || knownFields[i] == "cycle" {
			continue
		}
		if s := string(v); s == "null" || s == `""` || s == "false" && knownFields[i] == "parallel" {
			keepRaw(knownFields[i], v)
			f[i] = nil
		}
	}
	var r Record
	take := func(k string) (json.RawMessage, bool) {
		v := f[fieldIndex[k]]
		return v, v != nil && string(v) != "null"
	}
	if v, ok := take("v"); ok {
		if r.V, err = intField("v", v); err != nil {
			return r, err
		}
		if r.V < 1 {
			return r, &FieldError{"v", "must be 1 or more"}
		}
	} else {
		r.V = 1
	}
	if r.V > SchemaMajor {
		return r, &FieldError{"v", fmt.Sprintf("schema version %d is newer than this git-evolve reads (%d)", r.V, SchemaMajor)}
	}
	v, ok := take("cycle")
	if !ok {
		return r, &FieldError{"cycle", "is missing"}
	}
	if r.Cycle, err = intField("cycle", v); err != nil {
		return r, err
	}
	if r.Cycle < 0 {
		return r, &FieldError{"cycle", "must not be negative"}
	}
	for _, f := range []struct {
		name string
		dst  *string
	}{{"id", &r.ID}, {"target", &r.Target}, {"result", &r.Result}, {"sha", &r.SHA},
		{"canonical_sha", &r.CanonicalSHA}, {"log_sha", &r.LogSHA},
		{"cycle_start_sha", &r.CycleStartSHA}, {"timestamp", &r.Timestamp}} {
		if v, ok := take(f.name); ok {
			if *f.dst, ok = stringValue(v); !ok {
				return r, &FieldError{f.name, "must be a string"}
			}
		}
	}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"goals_passing", &r.GoalsPassing}, {"goals_total", &r.GoalsTotal}, {"idle_streak", &r.IdleStreak}} {
		if v, ok := take(f.name); ok {
			n, err := intField(f.name, v)
			if err != nil {
				return r, err
			}
			*f.dst = &n
		}
	}
	if v, ok := take("quality_score"); ok {
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || v[0] == '"' || math.IsInf(f, 0) || math.IsNaN(f) {
			return r, &FieldError{"quality_score", "must be a number"}
		}
		r.QualityScore = &f
	}
	if v, ok := take("parallel"); ok {
		switch string(v) {
		case "true":
			r.Parallel = true
		case "false":
		default:
			return r, &FieldError{"parallel", "must be true or false"}
		}
	}
	if v, ok := take("goal_ids"); ok {
		var ids []*string
		if err := json.Unmarshal(v, &ids); err != nil || ids == nil {
			return r, &FieldError{"goal_ids", "must be an array of strings"}
		}
		r.GoalIDs = make([]string, len(ids))
		for i, id := range ids {
			if id == nil {
				return r, &FieldError{"goal_ids", "must be an array of strings"}
			}
			r.GoalIDs[i] = *id
		}
	}
	if v, ok := take("gate"); ok {
		r.Gate = compact(v)
	}
	if v, ok := take("trace"); ok {
		t, err := ParseTrace(v)
		if err != nil {
			return r, err
		}
		r.Trace = t
	}
	if len(raw) > 0 {
		r.Extra = make(map[string]json.RawMessage, len(raw))
		for k, v := range raw {
			r.Extra[k] = compact(v)
		}
	}
	return r, nil
}

// absent reports whether a known field's value counts as not given: missing,
// null or the empty string (the canonical form omits all three).
func absent(v json.RawMessage) bool {
	return v == nil || string(v) == "null" || string(v) == `""`
}

// stringValue decodes a JSON string token; ok is false for other values.
func stringValue(v []byte) (string, bool) {
	if len(v) < 2 || v[0] != '"' {
		return "", false
	}
	escaped := false
	for _, c := range v[1 : len(v)-1] {
		if c == '\\' {
			escaped = true
			break
		}
	}
	return decodeString(v, escaped), true
}

// ParseTrace reads a trace object. It returns a *FieldError naming "trace"
// when data is not one JSON object, and "trace.<field>" when a known field
// is not a string.
func ParseTrace(data []byte) (*Trace, error) {
	members, err := topObject(data)
	if err != nil {
		return nil, &FieldError{"trace", "must be a JSON object"}
	}
	t := &Trace{Fields: make(map[string]string, len(members))}
	var vals [len(TraceFields)]json.RawMessage
	var raw map[string]json.RawMessage
	for _, m := range members {
		if i, ok := traceIndex[string(m.name(data))]; ok {
			vals[i] = data[m.start:m.end]
			continue
		}
		if raw == nil {
			raw = map[string]json.RawMessage{}
		}
		raw[m.key(data)] = data[m.start:m.end]
	}
	for i, k := range TraceFields {
		v := vals[i]
		if v == nil {
			continue
		}
		if string(v) == "null" {
			if raw == nil {
				raw = map[string]json.RawMessage{}
			}
			raw[k] = v // kept as it was
			continue
		}
		s, ok := stringValue(v)
		if !ok {
			return nil, &FieldError{"trace." + k, "must be a string"}
		}
		t.Fields[k] = s
	}
	for k, v := range raw {
		if t.Extra == nil {
			t.Extra = make(map[string]json.RawMessage, len(raw))
		}
		t.Extra[k] = compact(v)
	}
	return t, nil
}

func intField(name string, v json.RawMessage) (int, error) {
	n, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		// Accept integral numbers written as 12.0.
		f, ferr := strconv.ParseFloat(string(v), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 || f == 0 && !zeroMantissa(v) {
			return 0, &FieldError{name, "must be an integer"}
		}
		n = int64(f)
	}
	if n > math.MaxInt32 || n < math.MinInt32 {
		return 0, &FieldError{name, "is out of range"}
	}
	return int(n), nil
}

// zeroMantissa reports whether a number's digits before any exponent are all
// zero, so that a value ParseFloat rounds to 0 (1e-400) is not taken as 0.
func zeroMantissa(v []byte) bool {
	for _, c := range v {
		if c == 'e' || c == 'E' {
			break
		}
		if c >= '1' && c <= '9' {
			return false
		}
	}
	return true
}

func compact(v json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		return v
	}
	return b.Bytes()
}

// Marshal returns the canonical one-line JSON form of the record: known
// fields in the schema's order, then other fields sorted by name, no HTML
// escaping, no trailing newline.
func (r *Record) Marshal() []byte {
	return r.AppendMarshal(make([]byte, 0, 256))
}

// AppendMarshal appends the canonical form of the record to dst.
func (r *Record) AppendMarshal(dst []byte) []byte {
	w := objWriter{b: dst}
	w.int("v", r.V)
	w.str("id", r.ID)
	w.int("cycle", r.Cycle)
	w.str("target", r.Target)
	w.str("result", r.Result)
	w.str("sha", r.SHA)
	w.str("canonical_sha", r.CanonicalSHA)
	w.str("log_sha", r.LogSHA)
	w.str("cycle_start_sha", r.CycleStartSHA)
	w.str("timestamp", r.Timestamp)
	if r.GoalsPassing != nil {
		w.int("goals_passing", *r.GoalsPassing)
	}
	if r.GoalsTotal != nil {
		w.int("goals_total", *r.GoalsTotal)
	}
	if r.QualityScore != nil {
		w.key("quality_score")
		w.b = strconv.AppendFloat(w.b, *r.QualityScore, 'g', -1, 64)
	}
	if r.IdleStreak != nil {
		w.int("idle_streak", *r.IdleStreak)
	}
	if r.Parallel {
		w.key("parallel")
		w.b = append(w.b, "true"...)
	}
	if r.GoalIDs != nil {
		w.key("goal_ids")
		w.b = append(w.b, '[')
		for i, g := range r.GoalIDs {
			if i > 0 {
				w.b = append(w.b, ',')
			}
			w.b = appendString(w.b, g)
		}
		w.b = append(w.b, ']')
	}
	if len(r.Gate) > 0 {
		w.raw("gate", r.Gate)
	}
	if r.Trace != nil {
		w.key("trace")
		w.b = r.Trace.appendMarshal(w.b)
	}
	w.extra(r.Extra)
	return w.done()
}

// Marshal returns the canonical JSON form of the trace.
func (t *Trace) Marshal() []byte { return t.appendMarshal(nil) }

func (t *Trace) appendMarshal(dst []byte) []byte {
	w := objWriter{b: dst}
	for _, k := range TraceFields {
		if s, ok := t.Fields[k]; ok {
			w.key(k)
			w.b = appendString(w.b, s)
		}
	}
	w.extra(t.Extra)
	return w.done()
}

// objWriter appends the members of one JSON object.
type objWriter struct {
	b []byte
	n int
}

func (w *objWriter) key(k string) {
	if w.n == 0 {
		w.b = append(w.b, '{')
	} else {
		w.b = append(w.b, ',')
	}
	w.n++
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

// str writes a string member, or nothing when s is empty.
func (w *objWriter) str(k, s string) {
	if s != "" {
		w.key(k)
		w.b = appendString(w.b, s)
	}
}

func (w *objWriter) int(k string, n int) {
	w.key(k)
	w.b = strconv.AppendInt(w.b, int64(n), 10)
}

func (w *objWriter) raw(k string, v []byte) { w.key(k); w.b = append(w.b, v...) }

func (w *objWriter) extra(m map[string]json.RawMessage) {
	if len(m) == 0 {
		return
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.raw(k, m[k])
	}
}

func (w *objWriter) done() []byte {
	if w.n == 0 {
		return append(w.b, "{}"...)
	}
	return append(w.b, '}')
}

// appendString appends s as a JSON string exactly as encoding/json does with
// HTML escaping off: printable ASCII without quotes or backslashes is copied
// directly; anything else goes through encoding/json.
func appendString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' {
			return append(dst, encode(s)...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}

// Value encodes v as a record field's value in canonical form: JSON
// without HTML escaping.
func Value(v any) json.RawMessage { return encode(v) }

func encode(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only plain values reach here
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// DeriveID returns the id a record gets when it has none: a digest of its
// canonical form without an id, so the same record imported twice, or in two
// clones, has the same id. attached is the full name of the commit the
// record is stored on ("" for journal records).
func (r Record) DeriveID(attached string) string {
	r.ID = ""
	sum := sha256.Sum256(append(r.Marshal(), "\n"+attached...))
	return hex.EncodeToString(sum[:10])
}

// Validate checks the rules every new record must follow: a known result,
// a positive cycle number, numbers Parse reads back (32-bit integers, a
// finite quality score), and for productive results the canonical sha and
// both goal counts (passing ≤ total). It returns a *FieldError.
func (r *Record) Validate() error {
	if !ValidResult(r.Result) {
		return &FieldError{"result", fmt.Sprintf("%q is not one of %s", r.Result, strings.Join(Results, ", "))}
	}
	if r.Cycle < 1 {
		return &FieldError{"cycle", "must be 1 or more"}
	}
	for _, f := range []struct {
		name string
		v    *int
	}{{"cycle", &r.Cycle}, {"goals_passing", r.GoalsPassing}, {"goals_total", r.GoalsTotal}, {"idle_streak", r.IdleStreak}} {
		if f.v != nil && (*f.v > math.MaxInt32 || *f.v < math.MinInt32) {
			return &FieldError{f.name, "is out of range"}
		}
	}
	if r.QualityScore != nil && (math.IsNaN(*r.QualityScore) || math.IsInf(*r.QualityScore, 0)) {
		return &FieldError{"quality_score", "must be a finite number"}
	}
	if Productive(r.Result) {
		if r.Commit() == "" {
			return &FieldError{"canonical_sha", fmt.Sprintf("is required for a cycle whose result is %s", r.Result)}
		}
		if r.GoalsPassing == nil {
			return &FieldError{"goals_passing", fmt.Sprintf("is required for a cycle whose result is %s", r.Result)}
		}
		if r.GoalsTotal == nil {
			return &FieldError{"goals_total", fmt.Sprintf("is required for a cycle whose result is %s", r.Result)}
		}
	}
	if r.GoalsPassing != nil && *r.GoalsPassing < 0 {
		return &FieldError{"goals_passing", "must not be negative"}
	}
	if r.GoalsTotal != nil && *r.GoalsTotal < 0 {
		return &FieldError{"goals_total", "must not be negative"}
	}
	if r.GoalsPassing != nil && r.GoalsTotal != nil && *r.GoalsPassing > *r.GoalsTotal {
		return &FieldError{"goals_passing", fmt.Sprintf("%d is more than goals_total %d", *r.GoalsPassing, *r.GoalsTotal)}
	}
	if r.IdleStreak != nil && *r.IdleStreak < 0 {
		return &FieldError{"idle_streak", "must not be negative"}
	}
	return nil
}

// Aborted reports whether the record is of an aborted cycle (a crashed or
// hung agent, git evolve cycle abort): unchanged, with "aborted": true, on
// the commit the cycle started from.
func (r *Record) Aborted() bool {
	raw, ok := r.Extra["aborted"]
	if !ok {
		return false // most records: no decoding on a listing's path
	}
	var aborted bool
	_ = json.Unmarshal(raw, &aborted)
	return aborted
}

// TargetUnmoved reports whether an improved cycle with a goal for its
// target left that goal where it found it and the score no higher: its
// target_before and target_after are the same, or neither is pass (it
// failed before and still does not pass), and its score is not above the
// score it started from (before.score). A record that does not say all of
// these is not.
func (r *Record) TargetUnmoved() bool {
	if r.Result != Improved {
		return false
	}
	before, after := jsonString(r.Extra["target_before"]), jsonString(r.Extra["target_after"])
	if before == "" || after == "" || before != after && (before == "pass" || after == "pass") {
		return false
	}
	var score float64
	var start struct {
		Score *float64 `json:"score"`
	}
	if json.Unmarshal(r.Extra["score"], &score) != nil || json.Unmarshal(r.Extra["before"], &start) != nil || start.Score == nil {
		return false
	}
	return score <= *start.Score
}

// Less orders records for listing: by cycle, then timestamp, then id, so
// two clones that both wrote cycle N list them the same way.
func Less(a, b *Record) bool {
	if a.Cycle != b.Cycle {
		return a.Cycle < b.Cycle
	}
	if a.Timestamp != b.Timestamp {
		return a.Timestamp < b.Timestamp
	}
	return a.ID < b.ID
}

// Digest names a record's canonical line for the chain of records: the
// first 32 hex digits of its SHA-256.
func Digest(line []byte) string {
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:16])
}

// commitLater are the fields of a record not known when the commit it is
// stored on is made: set when the record is written, left out of
// CommitDigest.
var commitLater = []string{"prev", "recorded_by", "host", "saved"}

// CommitDigest names what a record says of its cycle, for the commit that
// delivers the cycle to carry in its message (the Evolve-Record trailer):
// "sha256:" and the hex SHA-256 of its canonical line without the fields
// that name that commit (sha, canonical_sha, log_sha) or are set when the
// record is written. A record edited later no longer matches the immutable
// commit.
func CommitDigest(r *Record) string {
	c := *r
	c.SHA, c.CanonicalSHA, c.LogSHA = "", "", ""
	c.Extra = make(map[string]json.RawMessage, len(r.Extra))
	for k, v := range r.Extra {
		c.Extra[k] = v
	}
	for _, k := range commitLater {
		delete(c.Extra, k)
	}
	// Nor is a copy's "anchored", which an import sets on a record stored
	// on its anchor: the copy delivered the same work.
	delete(c.Extra, "anchored")
	sum := sha256.Sum256(c.Marshal())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Link is the value of a record's "prev" field: the id and digest of the
// record written before it ("<id>:<digest>").
func Link(prev *Record) string {
	return prev.ID + ":" + Digest(prev.Marshal())
}

// ParseLink reads a "prev" value; ok is false when it is not one.
func ParseLink(s string) (id, digest string, ok bool) {
	id, digest, ok = strings.Cut(s, ":")
	return id, digest, ok && id != "" && len(digest) == 32 && isHexString(digest)
}

func isHexString(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isHexDigit(s[i]) {
			return false
		}
	}
	return true
}
