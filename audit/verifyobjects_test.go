package audit

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/git-evolve/git-evolve/gitstore"
)

func encodedObjects(k *keptObjects) []byte { return appendObjects(nil, k) }

func TestObjectsRoundTrip(t *testing.T) {
	for _, k := range []*keptObjects{
		{packs: []string{"pack-a.pack", "pack-b.pack"}, alternates: "file", loose: []gitstore.Hash{commit(1), commit(2)}},
		{loose: []gitstore.Hash{}},
	} {
		got, err := decodeObjects(encodedObjects(k))
		if err != nil || !reflect.DeepEqual(got, k) {
			t.Errorf("decodeObjects(appendObjects(%+v)) = %+v, %v", k, got, err)
		}
	}
}

// A file cut short, with a byte more or a byte changed, does not decode:
// a damaged list is never read as one that names fewer objects.
func TestObjectsDamaged(t *testing.T) {
	data := encodedObjects(&keptObjects{packs: []string{"pack-a.pack"}, alternates: "none", loose: []gitstore.Hash{commit(1), commit(2), commit(3)}})
	for n := 0; n < len(data); n++ {
		if _, err := decodeObjects(data[:n]); err == nil {
			t.Fatalf("cut at byte %d of %d, it decodes", n, len(data))
		}
		changed := bytes.Clone(data)
		changed[n] ^= 0x10
		if _, err := decodeObjects(changed); err == nil {
			t.Fatalf("with byte %d changed, it decodes", n)
		}
	}
	if _, err := decodeObjects(append(bytes.Clone(data), 0)); err == nil {
		t.Error("with a byte more, it decodes")
	}
}

func FuzzDecodeObjects(f *testing.F) {
	f.Add(encodedObjects(&keptObjects{packs: []string{"p"}, loose: []gitstore.Hash{commit(1)}}))
	f.Add(encodedObjects(&keptObjects{}))
	f.Add([]byte(objectsMagic + "\x01\xff\xff\xff\xff\x0f"))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := decodeObjects(data)
		if err != nil {
			return
		}
		again, err := decodeObjects(encodedObjects(k))
		if err != nil || !reflect.DeepEqual(again, k) {
			t.Errorf("decoded, encoded and decoded again: %+v, %v; want %+v", again, err, k)
		}
	})
}
