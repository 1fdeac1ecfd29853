package sim

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// Property: the live list always yields exactly the added and not dropped IDs, sorted,
// through adds, drops, re-adds and the compactions that many drops start.
func TestLiveListProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var l liveList
		want := map[api.WorkloadID]bool{}
		adds := rapid.IntRange(1, 4).Draw(rt, "adds in 4") // a run of drops makes compactions
		for range rapid.IntRange(1, 1500).Draw(rt, "steps") {
			id := api.WorkloadID(fmt.Sprintf("w%03d", rapid.IntRange(0, 300).Draw(rt, "id")))
			if rapid.IntRange(0, 3).Draw(rt, "op") < adds {
				l.add(id)
				want[id] = true
			} else {
				l.drop(id)
				delete(want, id)
			}
			// Reads come now and then, so several adds (repeats too) wait unsorted
			// for the next merge, which a drop also makes.
			if rapid.IntRange(0, 7).Draw(rt, "read") == 0 {
				checkLive(rt, &l, want)
			}
		}
		checkLive(rt, &l, want)
	})
}

func checkLive(rt *rapid.T, l *liveList, want map[api.WorkloadID]bool) {
	got := slices.Collect(l.all())
	exp := make([]api.WorkloadID, 0, len(want))
	for id := range want {
		exp = append(exp, id)
	}
	slices.Sort(exp)
	if !slices.Equal(got, exp) {
		rt.Fatalf("live %v, want %v", got, exp)
	}
	if gone := len(l.ids) - len(got); gone != l.dead {
		rt.Fatalf("%d finished entries kept, dead count says %d", gone, l.dead)
	}
}

// Many drops compact the list (random runs reach a compaction only sometimes, so this
// one is fixed), and the live IDs survive it in order.
func TestLiveListCompacts(t *testing.T) {
	var l liveList
	for i := range 200 {
		l.add(api.WorkloadID(fmt.Sprintf("w%03d", i)))
	}
	for i := range 150 {
		l.drop(api.WorkloadID(fmt.Sprintf("w%03d", i)))
	}
	if len(l.ids) >= 200 {
		t.Fatalf("%d entries kept after 150 of 200 dropped: no compaction", len(l.ids))
	}
	got := slices.Collect(l.all())
	if len(got) != 50 || got[0] != "w150" || got[49] != "w199" {
		t.Fatalf("live after compaction: %d IDs from %v to %v, want w150..w199", len(got), got[0], got[len(got)-1])
	}
}
