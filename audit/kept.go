package audit

import (
	"bufio"
	"bytes"
	"slices"
	"sync"

	"github.com/git-evolve/git-evolve/gitstore"
	"github.com/git-evolve/git-evolve/ledger/store"
)

// What verify keeps for the next verify is four sections of the view's
// file, the one file of what reads derive from the ledger (store/kept.go):
//
//   - the state: a summary of each record and the commits of HEAD's
//     history whose trailers name a cycle (verifystate.go);
//   - the keys: each record's summaries filed by key in a hash table, read
//     where the file is mapped (delta.go);
//   - the delta: the findings of the checks, and the summaries added since
//     the keys were written (delta.go);
//   - the objects: the loose objects there were, with the packs, which the
//     other sections stand for (verifyobjects.go).
//
// A verify writes the four together (store.PutKept), so that they always
// come from one verify, whatever other writers did since. A verify that
// read every summary writes them all; a verify after a few records writes
// the delta and the objects, and keeps the state and the keys as it read
// them (named where they are, while the file has them there): it writes
// the findings and the summaries added since the keys were written, and
// the objects' names, not the ledger's summaries. A verify that would
// write what is there writes nothing.
//
// The state and the delta name the token of the keys they were written
// with, which a reader checks; what keeps the objects with the sections
// they stand for is the table that names them all (a file forged whole is
// no more refused than a forged file of each was: the guard of an agent's
// turn empties the sections the turn changed). The sections are a cache: absent
// or damaged ones mean a full read from git, whose answer is the same.

// The sections verify keeps.
const (
	secState   = store.SecState
	secKeys    = store.SecKeys
	secDelta   = store.SecDelta
	secObjects = store.SecObjects
)

// verifySections are the sections verify keeps, in the table's order.
var verifySections = [...]int{secState, secKeys, secDelta, secObjects}

// keptFile is the view's file as a verify read it: its sections point
// into it until the last of those that hold it lets it go (release).
type keptFile struct {
	*store.Kept

	objsOnce sync.Once
	objs     *keptObjects // the objects section, decoded (objects)
}

// objects is the objects section decoded (once: it is read at the start
// of a verify and again as it keeps what it read), nil when k is nil, or
// the section is absent, too large or damaged.
func (k *keptFile) objects() *keptObjects {
	if k == nil {
		return nil
	}
	k.objsOnce.Do(func() {
		if sec := k.Section(secObjects); len(sec) > 0 && len(sec) <= maxObjectsFile {
			// a copy: what it decodes outlives the mapping
			k.objs, _ = decodeObjects(bytes.Clone(sec))
		}
	})
	return k.objs
}

// openKept reads what verify kept: nil when there is no view's file, it
// is damaged, or it holds none of verify's sections.
func openKept(repo *gitstore.Repo) *keptFile {
	k := store.OpenKept(store.ViewPath(repo))
	for _, i := range verifySections {
		if len(k.Section(i)) > 0 {
			return &keptFile{Kept: k}
		}
	}
	k.Release()
	return nil
}

// section is the bytes of section i: empty when it is absent, or k is nil.
func (k *keptFile) section(i int) []byte {
	if k == nil {
		return nil
	}
	return k.Section(i)
}

// retain takes another hold of k, for a reader that outlives the one that
// opened it.
func (k *keptFile) retain() *keptFile {
	if k != nil {
		k.Retain()
	}
	return k
}

// release lets go of a hold of k: the last one undoes the mapping, once
// nothing read from it points there.
func (k *keptFile) release() {
	if k != nil {
		k.Release()
	}
}

// keptParts are the sections a verify keeps, by their place in the table
// (verifySections; a nil one is absent): written anew, made in memory, or
// kept as they are in the file the verify built on.
type keptParts = [store.Sections]*store.Part

// written is a part written by write, which writes what is made already.
func written(write func(*bufio.Writer)) *store.Part {
	return &store.Part{Write: func(w *bufio.Writer) error { write(w); return nil }}
}

// dropKept empties verify's sections, the view's other sections kept.
func dropKept(repo *gitstore.Repo) {
	var parts [store.Sections]*store.Part
	for _, i := range verifySections {
		parts[i] = &store.Part{}
	}
	if err := store.PutKept(store.ViewPath(repo), nil, parts); err != nil {
		// (what is left is checked against the objects it stands for
		// as the next verify reads it)
		gitstore.Tracef("verify: its sections are not emptied: %v", err)
	}
}

// keepObjects is the objects section a verify that read the ledger with
// rd leaves beside what it writes: the loose objects there are now, with
// the packs the verify read. built is the file the verify built on (nil
// when it read from git alone): when an object its objects section lists
// is gone (a pack, or a loose one not packed since), or a pack the verify
// read, or a notes commit the ledger was read from (it went while the
// verify ran), or the alternates changed, ok is false and nothing may be
// kept.
func keepObjects(repo *gitstore.Repo, rd *ledgerReads, built *keptFile) (section []byte, ok bool) {
	dirs := repo.ObjectDirs()
	now, ok := gitstore.LooseObjects(dirs)
	packs := gitstore.PackNames(dirs)
	if ok && alternatesID(dirs) == rd.alternates && allIn(rd.packNames, packs) {
		types, err := repo.ObjectTypes(rd.sources)
		ok = err == nil && !slices.Contains(types, "")
	}
	if !ok {
		return nil, false
	}
	if len(built.section(secObjects)) > 0 {
		k := built.objects()
		if k == nil || !allIn(k.packs, packs) || !packedSince(repo, rd, notIn(k.loose, now)) {
			return nil, false
		}
	}
	// Every pack there is now: those the verify read, any a loose object
	// it listed went into since, and any a fetch added meanwhile.
	return appendObjects(nil, &keptObjects{packs: packs, alternates: rd.alternates, loose: now}), true
}

// keep writes what a verify leaves for the next one: the sections of parts,
// and the objects they stand for. When those objects cannot be vouched for
// (keepObjects), verify's sections are emptied: the next verify reads from
// git alone. A verify that would write what built (the file it built on)
// already holds writes nothing.
func keep(repo *gitstore.Repo, rd *ledgerReads, built *keptFile, parts keptParts) {
	objects, ok := keepObjects(repo, rd, built)
	if !ok {
		gitstore.Tracef("verify: an object or a pack %s stands for is gone, or the alternates changed: its verify sections are emptied", store.ViewPath(repo))
		dropKept(repo)
		return
	}
	parts[secObjects] = &store.Part{Bytes: objects}
	same := built != nil
	for _, i := range verifySections {
		if parts[i] == nil {
			parts[i] = &store.Part{} // absent: emptied
		}
		switch p := parts[i]; {
		case p.Write != nil:
			same = false
		case !p.Kept:
			same = same && bytes.Equal(p.Bytes, built.section(i))
		}
	}
	if same {
		return
	}
	var b *store.Kept
	if built != nil {
		b = built.Kept
	}
	if err := store.PutKept(store.ViewPath(repo), b, parts); err != nil {
		gitstore.Tracef("verify: what it read is not kept: %v", err)
	}
}
