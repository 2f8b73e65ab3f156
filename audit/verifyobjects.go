package audit

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"slices"

	"github.com/git-evolve/git-evolve/gitstore"
)

// What verify keeps (the summaries, the delta) stands for
// objects: the notes commits it read, their trees and notes. A kept answer
// is used only while every one of them is provably still here: an object
// in a pack stays while the pack does (a pack is never changed in place),
// and a loose object can be deleted on its own. So the packs there were
// must all still be here (a pack added since, as a fetch keeps one,
// removes nothing: the summaries then look up every commit again, the
// delta the commits it found missing), with the same alternates. So every
// verify that keeps what it read also lists, in the objects section of
// the view's file, the loose objects and the packs there are as it ends; the next one
// checks that each is still there before it uses anything kept. One that is gone (removed by hand,
// pruned, lost) sends the verify to git alone, which reads every object it
// stands for and reports one that is missing as a breach.
//
// The list only grows while the packs stay the same: a verify that finds
// every object listed still there lists, as it ends, the ones there are
// then, which include them (keepObjects).

const (
	objectsMagic = "git-evolve verify objects\n"
	// objectsFormat 1 named the packs by a digest of all of them: a pack
	// added by a fetch sent the next verify to git alone.
	objectsFormat = 2
	// maxObjectsFile bounds the section read back (a repository that
	// never packs its objects lists many).
	maxObjectsFile = 64 << 20
)

// keptObjects is what the objects section holds: the packs and the loose
// objects there were when a verify that kept what it read ended.
type keptObjects struct {
	packs      []string // their names, sorted (gitstore.PackNames)
	alternates string   // alternatesID
	loose      []gitstore.Hash
}

// appendObjects appends the objects section of k to b.
func appendObjects(b []byte, k *keptObjects) []byte {
	start := len(b)
	b = append(b, objectsMagic...)
	b = binary.AppendUvarint(b, objectsFormat)
	b = binary.AppendUvarint(b, uint64(len(k.packs)))
	for _, p := range k.packs {
		b = appendStr(b, p)
	}
	b = appendStr(b, k.alternates)
	b = binary.AppendUvarint(b, uint64(len(k.loose)))
	for _, h := range k.loose {
		b = append(b, h[:]...)
	}
	return binary.LittleEndian.AppendUint32(b, crc32.Checksum(b[start:], castagnoliTable()))
}

var errBadObjects = errors.New("the objects verify kept are damaged")

func decodeObjects(data []byte) (*keptObjects, error) {
	if len(data) < 4 {
		return nil, errBadObjects
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoliTable()) != sum {
		return nil, errBadObjects
	}
	rest, ok := bytes.CutPrefix(body, []byte(objectsMagic))
	if !ok {
		return nil, errBadObjects
	}
	s := &stateReader{b: rest}
	if s.uint() != objectsFormat {
		return nil, errBadObjects
	}
	k := &keptObjects{}
	n := s.count()
	for i := 0; i < n && s.err == nil; i++ {
		k.packs = append(k.packs, s.str())
	}
	k.alternates = s.str()
	n = s.count()
	if s.err != nil || uint64(n)*20 != uint64(len(s.b)) {
		return nil, errBadObjects
	}
	k.loose = make([]gitstore.Hash, n)
	for i := range k.loose {
		copy(k.loose[i][:], s.b[20*i:])
	}
	return k, nil
}

// objectsHold says whether what verify kept in k may be used: every pack
// its objects section names is still here, with the same alternates, and
// every loose object it lists is still here, loose or packed since.
func objectsHold(repo *gitstore.Repo, rd *ledgerReads, k *keptFile) bool {
	kept := k.objects()
	if kept == nil || kept.alternates != rd.alternates || !allIn(kept.packs, rd.packNames) {
		return false
	}
	var gone []gitstore.Hash
	if len(kept.loose) <= 256 {
		for _, h := range kept.loose {
			if !gitstore.LooseHere(rd.dirs, h) {
				gone = append(gone, h)
			}
		}
	} else {
		// Many: one listing of the directories costs less than a look at
		// each.
		now, ok := gitstore.LooseObjects(rd.dirs)
		if !ok {
			return false
		}
		gone = notIn(kept.loose, now)
	}
	return packedSince(repo, rd, gone)
}

// notIn is the objects of some that are not in all (both sorted).
func notIn(some, all []gitstore.Hash) []gitstore.Hash {
	var out []gitstore.Hash
	for _, h := range some {
		if _, found := slices.BinarySearchFunc(all, h, func(a, b gitstore.Hash) int { return bytes.Compare(a[:], b[:]) }); !found {
			out = append(out, h)
		}
	}
	return out
}

// packedSince says whether the loose objects gone, which verify listed,
// are all still here: packed since (git repack -d and git gc --auto pack
// the loose objects and remove them), in a pack of this repository, which
// the objects section of the verify that finds them names. One question
// to git, asked only when one is gone. Not where the repository borrows
// objects (alternates): there git could find one in a pack of another
// repository, which no section names, and whose gc would go unseen.
func packedSince(repo *gitstore.Repo, rd *ledgerReads, gone []gitstore.Hash) bool {
	if len(gone) == 0 {
		return true
	}
	if rd.alternates != "" {
		gitstore.Tracef("verify: the loose object %s is gone since verify kept what it read", gone[0].Short())
		return false
	}
	// A git started now, with replace refs not followed: the object store
	// as it is, where a reader opened before may still hold a pack a gc
	// removed since, and a replace ref answers for an object that is gone.
	if here, err := repo.ObjectsHere(gone); err != nil || !here {
		gitstore.Tracef("verify: a loose object is gone since verify kept what it read (%d not loose now)", len(gone))
		return false
	}
	gitstore.Tracef("verify: %d loose object(s) verify kept were packed since", len(gone))
	return true
}

// allIn says whether every name of some is in all (both sorted).
func allIn(some, all []string) bool {
	for _, name := range some {
		if _, ok := slices.BinarySearch(all, name); !ok {
			return false
		}
	}
	return true
}
