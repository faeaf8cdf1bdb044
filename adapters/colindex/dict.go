package colindex

import (
	"bytes"
	"hash/maphash"
	"iter"
	"unsafe"
)

// dictionary numbers the distinct (key, text) pairs of one dimension
// within a CAT. For topic, model and persona the key is the text.
//
// A CAT can have hundreds of thousands of one-off questions, so the pairs
// are stored compactly: their bytes back to back in chunks that never
// move (strings handed out point into them), 16 bytes of entry per pair,
// and an open-addressing hash table of codes by key.
type dictionary struct {
	chunks [][]byte
	// chunkCap is the capacity of the last chunk made: the next is twice
	// as large, up to chunkBytes.
	chunkCap int
	entries  []entry
	seed     maphash.Seed
	// slots holds, by the hash of a key, the key's first code plus one;
	// 0 is an empty slot. Its length is a power of two, at most 3/4 full.
	slots []uint32
	// sameKey[c] is the next code with c's key (rare: one key with
	// several texts), or noCode.
	sameKey []uint32
	// byRank lists the first ranked codes in (text, key) order; rank is
	// the inverse (see updateRanks).
	byRank []uint32
	rank   []uint32
	ranked int
}

// entry locates a pair in the chunks: the key, then the text unless
// textLen is sameText (the text is the key).
type entry struct {
	chunk, off, keyLen, textLen uint32
}

const (
	// chunkBytes is the largest size of a chunk; a longer pair gets a
	// chunk of its own.
	chunkBytes = 1 << 20
	sameText   = ^uint32(0)
	// noCode ends a sameKey chain.
	noCode = ^uint32(0)
)

func newDictionary() dictionary { return dictionary{seed: maphash.MakeSeed()} }

// len returns how many pairs the dictionary has.
func (d *dictionary) len() int { return len(d.entries) }

// key returns code c's key.
func (d *dictionary) key(c uint32) string {
	e := d.entries[c]
	return view(d.chunks[e.chunk], e.off, e.keyLen)
}

// text returns code c's text.
func (d *dictionary) text(c uint32) string {
	e := d.entries[c]
	if e.textLen == sameText {
		return view(d.chunks[e.chunk], e.off, e.keyLen)
	}
	return view(d.chunks[e.chunk], e.off+e.keyLen, e.textLen)
}

// view returns n bytes of chunk from off as a string without copying
// them: a chunk's written bytes never change, so the string stays valid.
func view(chunk []byte, off, n uint32) string {
	if n == 0 {
		return ""
	}
	return unsafe.String(&chunk[off], n) // #nosec G103 -- chunk bytes are written once, never changed
}

// codesOf returns the codes of a key.
func (d *dictionary) codesOf(key string) iter.Seq[uint32] {
	return func(yield func(uint32) bool) {
		for c := d.first(maphash.String(d.seed, key), func(c uint32) bool { return d.key(c) == key }); c != noCode; c = d.sameKey[c] {
			if !yield(c) {
				return
			}
		}
	}
}

// first returns the first code whose key is, by is, with the given hash;
// noCode when none.
func (d *dictionary) first(hash uint64, is func(uint32) bool) uint32 {
	if len(d.slots) == 0 {
		return noCode
	}
	mask := uint64(len(d.slots) - 1)
	for i := hash & mask; d.slots[i] != 0; i = (i + 1) & mask {
		if c := d.slots[i] - 1; is(c) {
			return c
		}
	}
	return noCode
}

// code returns the pair's code, adding the pair if it is new.
func (d *dictionary) code(key, text []byte) uint32 {
	hash := maphash.Bytes(d.seed, key)
	c, last := d.lookup(hash, key, text)
	if c == noCode {
		c = d.add(hash, key, text, last)
	}
	return c
}

// lookup returns the pair's code, noCode when it has none; and the last
// code of its key, noCode when the key has none.
func (d *dictionary) lookup(hash uint64, key, text []byte) (code, last uint32) {
	last = noCode
	for c := d.first(hash, func(c uint32) bool { return d.key(c) == string(key) }); c != noCode; c = d.sameKey[c] {
		if d.text(c) == string(text) {
			return c, last
		}
		last = c
	}
	return noCode, last
}

// add adds a new pair, whose key's last code is last (noCode for a new
// key), and returns its code.
func (d *dictionary) add(hash uint64, key, text []byte, last uint32) uint32 {
	c := uint32(len(d.entries)) // #nosec G115 -- fewer than 2^32 distinct values
	d.entries = append(d.entries, d.store(key, text))
	d.sameKey = append(d.sameKey, noCode)
	if last != noCode {
		d.sameKey[last] = c
	} else {
		d.place(hash, c)
	}
	return c
}

// store copies the pair into the chunks.
func (d *dictionary) store(key, text []byte) entry {
	size := len(key)
	same := bytes.Equal(key, text)
	if !same {
		size += len(text)
	}
	if n := len(d.chunks); n == 0 || cap(d.chunks[n-1])-len(d.chunks[n-1]) < size {
		// Chunks start small, for the dimensions of a few short values.
		grown := 4096
		if d.chunkCap > 0 {
			grown = min(chunkBytes, 2*d.chunkCap)
		}
		d.chunkCap = max(grown, size)
		d.chunks = append(d.chunks, make([]byte, 0, d.chunkCap))
	}
	k := len(d.chunks) - 1
	e := entry{chunk: uint32(k), off: uint32(len(d.chunks[k])), keyLen: uint32(len(key)), textLen: sameText} // #nosec G115 -- chunks and fields are far below 4 GiB
	d.chunks[k] = append(d.chunks[k], key...)
	if !same {
		d.chunks[k] = append(d.chunks[k], text...)
		e.textLen = uint32(len(text)) // #nosec G115 -- fields are far below 4 GiB
	}
	return e
}

// place puts code c, the first of its key, in the hash table, growing the
// table when it gets more than 3/4 full.
func (d *dictionary) place(hash uint64, c uint32) {
	if 4*(len(d.entries)) > 3*len(d.slots) {
		old := d.slots
		d.slots = make([]uint32, max(64, 2*len(old)))
		for _, s := range old {
			if s != 0 {
				putSlot(d.slots, maphash.String(d.seed, d.key(s-1)), s-1)
			}
		}
	}
	putSlot(d.slots, hash, c)
}

// putSlot puts code c, whose key has the hash, in the first free slot.
func putSlot(slots []uint32, hash uint64, c uint32) {
	mask := uint64(len(slots) - 1)
	i := hash & mask
	for slots[i] != 0 {
		i = (i + 1) & mask
	}
	slots[i] = c + 1
}

// trim drops the spare capacity that growing left behind.
func (d *dictionary) trim() {
	d.entries, d.sameKey = trimmed(d.entries), trimmed(d.sameKey)
	d.byRank, d.rank = trimmed(d.byRank), trimmed(d.rank)
}
