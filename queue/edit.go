package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
)

// span is where a JSON value lies in the text it was read from.
type span struct{ start, end int }

// field is a member of a JSON object: its key and its value's span.
type field struct {
	key string
	val span
}

// objectFields reads the members of the JSON object data, in their order,
// with where each value is.
func objectFields(data []byte) ([]field, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []field
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := t.(string)
		if !ok {
			return nil, errors.New("not a JSON object")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		out = append(out, field{key: key, val: span{end - len(v), end}})
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return nil, err
	}
	return out, nil
}

// arrayElems reads where each element of the JSON array data is.
func arrayElems(data []byte) ([]span, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('[') {
		return nil, errors.New("not a JSON array")
	}
	var out []span
	for dec.More() {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		end := int(dec.InputOffset())
		out = append(out, span{end - len(v), end})
	}
	return out, nil
}

// marshal is json.Marshal without HTML escaping: "<" stays "<".
func marshal(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// editObject is the JSON object data with the members of set given their
// new values (nil removes one), in the object's own order, the new ones
// after; the others are copied as they were written.
func editObject(data []byte, set map[string]json.RawMessage, order []string) ([]byte, error) {
	fields, err := objectFields(data)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteByte('{')
	n := 0
	member := func(key string, val []byte) {
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(marshal(key))
		b.WriteByte(':')
		b.Write(val)
	}
	had := map[string]bool{}
	for _, f := range fields {
		had[f.key] = true
		v, changed := set[f.key]
		switch {
		case !changed:
			member(f.key, data[f.val.start:f.val.end])
		case v != nil:
			member(f.key, v)
		}
	}
	for _, k := range order {
		if v := set[k]; !had[k] && v != nil {
			member(k, v)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// editLine is an entry's line with the items of edits (by index) replaced
// by the bytes given; everything else stays byte for byte.
func editLine(raw []byte, edits map[int][]byte) ([]byte, error) {
	start := bytes.IndexByte(raw, '{')
	end := bytes.LastIndexByte(raw, '}')
	if start < 0 || end < start {
		return nil, errors.New("not an entry")
	}
	obj := raw[start : end+1]
	fields, err := objectFields(obj)
	if err != nil {
		return nil, err
	}
	for _, f := range fields {
		if f.key != "items" {
			continue
		}
		arr := obj[f.val.start:f.val.end]
		elems, err := arrayElems(arr)
		if err != nil {
			return nil, err
		}
		out := append([]byte(nil), raw[:start+f.val.start]...)
		pos := 0
		for i, e := range elems {
			if repl, ok := edits[i]; ok {
				out = append(out, arr[pos:e.start]...)
				out = append(out, repl...)
				pos = e.end
			}
		}
		out = append(out, arr[pos:]...)
		return append(out, raw[start+f.val.end:]...), nil
	}
	return nil, errors.New("an entry without items")
}
