package rag

import (
	"strings"
	"sync"
	"sync/atomic"
)

// termDict numbers a collection's terms; IDs never change, so immutable indexes built at
// different times can share it.
//
// Ingest workers look terms up in it concurrently (~0.8M lookups and 425k new terms for
// GOROOT/src), so reads take no lock: an open-addressing table of (hash, ID) words that a
// reader loads atomically, and the terms in pages that never move. Writers take mu, store the
// term, then publish its slot; a table that fills up is replaced by a larger copy, and a reader
// still on the old one finds newer terms by retrying under mu. A Go map behind a sync.RWMutex
// cost ~9% of an ingest's CPU and more of its time: every new term took the write lock and
// parked the other worker, which left ~20% of the benchmark VM's CPU idle (+31% ingest
// throughput without it).
type termDict struct {
	mu    sync.Mutex // writers
	table atomic.Pointer[dictTable]
	pages atomic.Pointer[[]*[dictPage]string] // terms by ID: page id/dictPage
	n     atomic.Uint32                       // terms numbered
}

// dictPage is the number of terms in a page of termDict.pages.
const dictPage = 1 << 14

// dictTable is an open-addressing hash table with linear probing. A slot is 0 when empty, else
// the term's 32-bit hash in the high half and its ID+1 in the low half.
type dictTable struct {
	slots []atomic.Uint64 // len is a power of two, at most half full
}

func newTermDict() *termDict {
	d := &termDict{}
	d.table.Store(&dictTable{slots: newZeroed[atomic.Uint64](1 << 10)}) // probed before filled
	d.pages.Store(&[]*[dictPage]string{})
	return d
}

// mixHash folds an FNV-1a hash's high bits into its low ones, which power-of-two tables (this
// dictionary's, ingest workers' caches) index by: FNV's low bits mix poorly.
func mixHash(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	return h
}

// dictHash is the hash the table keys a term by.
func dictHash(t string) uint32 { return mixHash(fnvAdd(fnvBasis, t)) }

// term returns the term numbered id (id < d.size()).
func (d *termDict) term(id uint32) string {
	return (*d.pages.Load())[id/dictPage][id%dictPage]
}

// find returns t's ID if it is in table tb.
func (d *termDict) find(tb *dictTable, t string, h uint32) (uint32, bool) {
	mask := uint32(len(tb.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		v := tb.slots[i].Load()
		if v == 0 {
			return 0, false
		}
		if uint32(v>>32) == h {
			if id := uint32(v) - 1; d.term(id) == t {
				return id, true
			}
		}
	}
}

// id returns t's ID, numbering it if it is new.
func (d *termDict) id(t string) uint32 { return d.idHashed(t, dictHash(t)) }

// idHashed is id for a caller that has t's dictHash already.
func (d *termDict) idHashed(t string, h uint32) uint32 {
	if id, ok := d.find(d.table.Load(), t, h); ok {
		return id
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	tb := d.table.Load()
	if id, ok := d.find(tb, t, h); ok { // numbered meanwhile
		return id
	}
	id := d.n.Load()
	pages := *d.pages.Load()
	if int(id/dictPage) == len(pages) { // a new page, in a new slice: readers hold the old one
		grown := append(pages[:len(pages):len(pages)], new([dictPage]string))
		d.pages.Store(&grown)
		pages = grown
	}
	pages[id/dictPage][id%dictPage] = strings.Clone(t)
	if 2*(int(id)+1) > len(tb.slots) {
		tb = d.grow(tb)
	}
	d.insert(tb, h, id)
	d.n.Store(id + 1)
	return id
}

// insert publishes id (hash h) in tb: after this, readers find it.
func (d *termDict) insert(tb *dictTable, h, id uint32) {
	mask := uint32(len(tb.slots) - 1)
	i := h & mask
	for tb.slots[i].Load() != 0 {
		i = (i + 1) & mask
	}
	tb.slots[i].Store(uint64(h)<<32 | uint64(id+1))
}

// grow replaces tb by a table twice its size holding the same terms (the caller holds mu).
func (d *termDict) grow(tb *dictTable) *dictTable {
	bigger := &dictTable{slots: newZeroed[atomic.Uint64](2 * len(tb.slots))}
	for i := range tb.slots {
		if v := tb.slots[i].Load(); v != 0 {
			d.insert(bigger, uint32(v>>32), uint32(v)-1)
		}
	}
	d.table.Store(bigger)
	return bigger
}

// idBytes is id for a term read from a segment, without allocating when the term is known.
func (d *termDict) idBytes(b []byte) uint32 {
	h := dictHash(string(b)) // these conversions do not allocate: the strings do not escape
	if id, ok := d.find(d.table.Load(), string(b), h); ok {
		return id
	}
	return d.idHashed(string(b), h)
}

// terms returns the strings of ids.
func (d *termDict) terms(ids []uint32) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = d.term(id)
	}
	return out
}

// lookup returns t's ID without numbering it.
func (d *termDict) lookup(t string) (uint32, bool) {
	return d.find(d.table.Load(), t, dictHash(t))
}

func (d *termDict) size() int { return int(d.n.Load()) }
