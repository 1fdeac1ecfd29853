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
	compacted := false
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
				before := len(l.ids)
				l.drop(id)
				delete(want, id)
				compacted = compacted || len(l.ids) < before
			}
			got := slices.Collect(l.all())
			exp := make([]api.WorkloadID, 0, len(want))
			for id := range want {
				exp = append(exp, id)
			}
			slices.Sort(exp)
			if !slices.Equal(got, exp) {
				rt.Fatalf("live %v, want %v", got, exp)
			}
		}
	})
	if !compacted {
		t.Fatal("no run compacted the list")
	}
}
