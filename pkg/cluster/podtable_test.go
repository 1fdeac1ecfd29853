package cluster

import (
	"fmt"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"pgregory.net/rapid"
)

// TestPodTableWithMatchesAMap: a chain of tables made by with holds exactly what a map
// given the same changes holds, and every earlier table still holds what it held (the
// shards they share are never written).
func TestPodTableWithMatchesAMap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tables := []*podTable{{}}
		models := []map[PodRef]*BoundPod{{}}
		for step := rapid.IntRange(0, 20).Draw(t, "steps"); step > 0; step-- {
			changes := map[PodRef]*BoundPod{}
			for k := rapid.IntRange(0, 12).Draw(t, "changes"); k > 0; k-- {
				ref := PodRef{Workload: api.WorkloadID("ns/w" + fmt.Sprint(rapid.IntRange(0, 40).Draw(t, "w"))), PodSet: "main", Index: rapid.IntRange(0, 3).Draw(t, "i")}
				if rapid.Bool().Draw(t, "remove") {
					changes[ref] = nil
				} else {
					changes[ref] = &BoundPod{Ref: ref, Node: fmt.Sprint("n", rapid.IntRange(0, 5).Draw(t, "node"))}
				}
			}
			last := models[len(models)-1]
			next := make(map[PodRef]*BoundPod, len(last))
			for r, p := range last {
				next[r] = p
			}
			for r, p := range changes {
				if p == nil {
					delete(next, r)
				} else {
					next[r] = p
				}
			}
			tables = append(tables, tables[len(tables)-1].with(changes))
			models = append(models, next)
		}
		for k, tab := range tables {
			if tab.len() != len(models[k]) {
				t.Fatalf("table %d holds %d pods, model %d", k, tab.len(), len(models[k]))
			}
			seen := 0
			tab.each(func(p *BoundPod) {
				seen++
				if models[k][p.Ref] != p {
					t.Fatalf("table %d: %s bound to %s, model says %v", k, p.Ref, p.Node, models[k][p.Ref])
				}
			})
			for r, p := range models[k] {
				if got, ok := tab.get(r); !ok || got != p {
					t.Fatalf("table %d: get(%s) = %v, %v; want %v", k, r, got, ok, p)
				}
			}
			if seen != len(models[k]) {
				t.Fatalf("table %d: each saw %d pods, model %d", k, seen, len(models[k]))
			}
		}
	})
}
