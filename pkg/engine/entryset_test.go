package engine

import (
	"fmt"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// TestEntrySetMatchesAMap: random joins and leaves over two slots (each set serves one
// slot, as in the scheduler) keep every set equal to a map model, and each entry's
// recorded place points at itself.
func TestEntrySetMatchesAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		es := make([]*entry, rapid.IntRange(1, 12).Draw(t, "entries"))
		for i := range es {
			es[i] = &entry{id: api.WorkloadID(fmt.Sprint(i))}
		}
		sets := map[slot][]*entrySet{slotKind: {{}, {}, {}}, slotCQ: {{}, {}}}
		model := map[slot]map[*entry]int{slotKind: {}, slotCQ: {}} // entry -> set index
		for step := rapid.IntRange(0, 60).Draw(t, "steps"); step > 0; step-- {
			e := rapid.SampledFrom(es).Draw(t, "entry")
			k := rapid.SampledFrom([]slot{slotKind, slotCQ}).Draw(t, "slot")
			if rapid.Bool().Draw(t, "join") {
				i := rapid.IntRange(0, len(sets[k])-1).Draw(t, "set")
				sets[k][i].join(e, k)
				model[k][e] = i
			} else {
				leave(e, k)
				delete(model[k], e)
			}
			for _, k := range []slot{slotKind, slotCQ} {
				for i, s := range sets[k] {
					want := 0
					for _, in := range model[k] {
						if in == i {
							want++
						}
					}
					got := 0
					for p, m := range s.entries() {
						if m.slots.in[k] != s {
							t.Fatalf("entry %s is in set %d but records another", m.id, i)
						}
						{
							got++
							if int(m.slots.pos[k]) != p {
								t.Fatalf("entry %s records place %d in set %d, is at %d", m.id, m.slots.pos[k], i, p)
							}
							if model[k][m] != i {
								t.Fatalf("entry %s in set %d, model says %d", m.id, i, model[k][m])
							}
						}
					}
					if got != want {
						t.Fatalf("slot %d set %d holds %d entries, model %d", k, i, got, want)
					}
				}
			}
		}
	})
}

// TestOrderedEntrySetFirstIsLeast: an ordered set's first member is always the least of
// its members, through random joins and leaves, and it hands them out in order.
func TestOrderedEntrySetFirstIsLeast(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		es := make([]*entry, rapid.IntRange(1, 20).Draw(t, "entries"))
		for i := range es {
			queued := time.Duration(rapid.IntRange(0, 5).Draw(t, "queued")) * time.Second
			es[i] = &entry{id: api.WorkloadID(fmt.Sprintf("%02d", i)), w: &api.Workload{}, queuedAt: gt.Epoch().Add(queued)}
		}
		set := &entrySet{before: classBefore}
		in := map[*entry]bool{}
		for step := rapid.IntRange(0, 60).Draw(t, "steps"); step > 0; step-- {
			e := rapid.SampledFrom(es).Draw(t, "entry")
			if rapid.Bool().Draw(t, "join") {
				set.join(e, slotClass)
				in[e] = true
			} else {
				leave(e, slotClass)
				delete(in, e)
			}
			var least *entry
			for m := range in {
				if least == nil || classBefore(m, least) {
					least = m
				}
			}
			if got := set.first(); got != least {
				t.Fatalf("first is %v, least member %v", got, least)
			}
		}
		var prev *entry
		for e := set.first(); e != nil; e = set.first() {
			if prev != nil && classBefore(e, prev) {
				t.Fatalf("%s handed out after %s", e.id, prev.id)
			}
			leave(e, slotClass)
			prev = e
		}
	})
}
