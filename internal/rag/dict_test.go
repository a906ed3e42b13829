package rag

import (
	"strconv"
	"sync"
	"testing"
)

// TestTermDictConcurrent: goroutines numbering overlapping terms while the table grows many
// times give every term exactly one ID, the IDs are 0 to n-1, and every ID reads back its term
// (run with -race: readers take no lock).
func TestTermDictConcurrent(t *testing.T) {
	d := newTermDict()
	const terms, workers = 20000, 4
	got := make([][]uint32, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids := make([]uint32, terms)
			for i := range terms {
				k := (i*7919 + w*1237) % terms // each worker in its own order
				term := "t" + strconv.Itoa(k)
				if w%2 == 1 {
					ids[k] = d.idBytes([]byte(term))
				} else {
					ids[k] = d.id(term)
				}
				if id, ok := d.lookup(term); !ok || id != ids[k] {
					t.Errorf("lookup(%q) = %d, %v right after it was numbered %d", term, id, ok, ids[k])
					return
				}
			}
			got[w] = ids
		}()
	}
	wg.Wait()
	if d.size() != terms {
		t.Fatalf("%d terms numbered, want %d", d.size(), terms)
	}
	seen := make([]bool, terms)
	for k := range terms {
		id := got[0][k]
		for w := 1; w < workers; w++ {
			if got[w][k] != id {
				t.Fatalf("term %d: worker 0 got ID %d, worker %d got %d", k, id, w, got[w][k])
			}
		}
		if id >= terms || seen[id] {
			t.Fatalf("term %d: ID %d out of range or given twice", k, id)
		}
		seen[id] = true
		if want := "t" + strconv.Itoa(k); d.term(id) != want {
			t.Fatalf("term(%d) = %q, want %q", id, d.term(id), want)
		}
	}
	if _, ok := d.lookup("absent"); ok {
		t.Fatal("lookup found a term never numbered")
	}
	n := d.size()
	first := d.id("")
	if again := d.id(""); first != uint32(n) || again != first || d.size() != n+1 {
		t.Fatalf("the empty term got IDs %d then %d (size %d → %d), want %d once", first, again, n, d.size(), n)
	}
}
