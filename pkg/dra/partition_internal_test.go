package dra

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// counterLayouts counts the sets of m's placements whose counters fit the GPU's counter
// set together, failing t on any such set ValidateLayout rejects.
func counterLayouts(t *testing.T, m devices.Model) int {
	total := map[string]int64{}
	for name, c := range partitionCounters(m) {
		total[name] = c.Value.Value()
	}
	placements := m.Placements()
	used := map[string]int64{}
	var layout []devices.Instance
	n := 0
	var walk func(i int)
	walk = func(i int) {
		if i == len(placements) {
			n++
			if err := m.ValidateLayout(layout); err != nil {
				t.Fatalf("%s: counters allow %v: %v", m.ID, layout, err)
			}
			return
		}
		walk(i + 1)
		need := placementCounters(m, placements[i])
		for name, c := range need {
			if _, ok := total[name]; !ok {
				t.Fatalf("%s: %s consumes counter %s the set lacks", m.ID, placements[i], name)
			}
			if used[name]+c.Value.Value() > total[name] {
				return
			}
		}
		for name, c := range need {
			used[name] += c.Value.Value()
		}
		layout = append(layout, placements[i])
		walk(i + 1)
		layout = layout[:len(layout)-1]
		for name, c := range need {
			used[name] -= c.Value.Value()
		}
	}
	walk(0)
	return n
}

// validLayouts counts the sets of m's placements ValidateLayout accepts.
func validLayouts(m devices.Model) int {
	placements := m.Placements()
	var layout []devices.Instance
	n := 0
	var walk func(i int)
	walk = func(i int) {
		if i == len(placements) {
			n++
			return
		}
		walk(i + 1)
		if m.ValidateLayout(append(layout, placements[i])) == nil {
			layout = append(layout, placements[i])
			walk(i + 1)
			layout = layout[:len(layout)-1]
		}
	}
	walk(0)
	return n
}

// On every catalogued MIG model, the placements whose counters fit together are exactly
// the layouts the hardware accepts: kube-scheduler, counting counters, and Gantry,
// carving by the placement rules, agree on what a partitionable GPU can hold.
func TestPartitionCountersAreThePlacementRules(t *testing.T) {
	for _, m := range devices.MIGModels() {
		t.Run(string(m.ID), func(t *testing.T) {
			got, want := counterLayouts(t, m), validLayouts(m)
			if got != want {
				t.Errorf("counters allow %d layouts, the placement rules %d", got, want)
			}
			sets := len(partitionCounters(m))
			if sets > 16 {
				t.Errorf("%d counters per GPU: a 1.34 slice holds 32 in all, so fewer than 2 GPUs per slice", sets)
			}
		})
	}
}
