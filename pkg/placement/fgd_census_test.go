package placement

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// censusSnapshot is a cluster of two pools that differ in their GPU model label.
func censusSnapshot(t interface{ Fatal(...any) }) *cluster.Snapshot {
	var nodes []cluster.Node
	for _, p := range []api.NodePool{
		{Meta: api.Meta{Name: "a100"}, Count: 3, GPUModel: "A100-SXM4-80GB", GPUsPerNode: 8, CPU: 64000, Memory: 512 << 30},
		{Meta: api.Meta{Name: "h100"}, Count: 2, GPUModel: "H100-SXM5-80GB", GPUsPerNode: 8, CPU: 96000, Memory: 1 << 40},
	} {
		ns, err := cluster.ExpandPool(p)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, ns...)
	}
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// drawCensusWorkload is a workload of one or two pod sets from a small palette of
// shapes, some tied to a pool by node selector.
func drawCensusWorkload(t *rapid.T, i int) *api.Workload {
	w := &api.Workload{Meta: api.Meta{Namespace: "ns", Name: fmt.Sprintf("w%d", i)}}
	for k := range rapid.IntRange(1, 2).Draw(t, "podSets") {
		ps := api.PodSet{Name: fmt.Sprintf("p%d", k), Count: int32(rapid.IntRange(1, 4).Draw(t, "count")),
			Requests: resources.Vector{
				resources.CPU:       resources.Amount(rapid.SampledFrom([]int{0, 4000, 16000}).Draw(t, "cpu")),
				resources.NvidiaGPU: resources.Amount(rapid.IntRange(0, 4).Draw(t, "gpus")),
			}}
		if rapid.Bool().Draw(t, "pinned") {
			ps.NodeSelector = map[string]string{"gantry.dev/node-pool": rapid.SampledFrom([]string{"a100", "h100"}).Draw(t, "pool")}
		}
		w.PodSets = append(w.PodSets, ps)
	}
	return w
}

// Property: the statistics a census fills are a function of the live workloads and the
// nodes alone. A census that saw workloads arrive and some leave, in any order, fills
// the same statistics as a fresh one given only the survivors in another order (what a
// restarted scheduler rebuilds from).
func TestShapeCensusIsOrderFree(t *testing.T) {
	snap := censusSnapshot(t)
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 12).Draw(rt, "workloads")
		wls := make([]*api.Workload, n)
		for i := range wls {
			wls[i] = drawCensusWorkload(rt, i)
		}
		gone := map[int]bool{}
		long := NewShapeCensus()
		long.Nodes(snap)
		filled := NewShapeStats()
		for i, w := range wls {
			long.Add(w)
			if rapid.Bool().Draw(rt, "fillBetween") {
				long.Fill(filled) // fills between arrivals must not leave a trace
			}
			if j := rapid.IntRange(0, i).Draw(rt, "leave"); rapid.Bool().Draw(rt, "leaves") && !gone[j] {
				gone[j] = true
				long.Remove(wls[j])
			}
		}
		long.Fill(filled)

		fresh := NewShapeCensus()
		for i := len(wls) - 1; i >= 0; i-- {
			if !gone[i] {
				fresh.Add(wls[i])
			}
		}
		fresh.Nodes(snap)
		rebuilt := NewShapeStats()
		fresh.Fill(rebuilt)

		filled.version, rebuilt.version = 0, 0
		if !reflect.DeepEqual(filled, rebuilt) {
			rt.Fatalf("statistics differ:\nafter arrivals and departures: %+v\nrebuilt from survivors:        %+v", filled, rebuilt)
		}
	})
}

// Fill rebuilds only when something changed, and every rebuild moves the version, so a
// score memo keyed by it cannot serve a score read under the old statistics.
func TestShapeCensusFillMovesVersion(t *testing.T) {
	c, s := NewShapeCensus(), NewShapeStats()
	c.Nodes(censusSnapshot(t))
	w := &api.Workload{Meta: api.Meta{Namespace: "ns", Name: "w"}, PodSets: []api.PodSet{{Name: "p", Count: 2, Requests: resourcesOneGPU()}}}
	c.Add(w)
	if !c.Fill(s) || s.Total() != 2 {
		t.Fatalf("first fill: total %d, want the 2 live pods", s.Total())
	}
	v := s.Version()
	if c.Fill(s) || s.Version() != v {
		t.Fatalf("a fill without changes rebuilt the statistics (version %d -> %d)", v, s.Version())
	}
	c.Remove(w)
	if !c.Fill(s) || s.Total() != 0 || s.Version() <= v {
		t.Fatalf("after the workload left: total %d version %d (was %d), want 0 pods and a new version", s.Total(), s.Version(), v)
	}
}

// A driver that builds a new snapshot every pass from unchanged nodes (the controller)
// does not make the census rebuild; a node that changed does.
func TestShapeCensusSameNodesNewSnapshot(t *testing.T) {
	first := censusSnapshot(t)
	var nodes []cluster.Node
	for i := range first.NumNodes() {
		nodes = append(nodes, *first.Node(i))
	}
	c, s := NewShapeCensus(), NewShapeStats()
	c.Add(&api.Workload{Meta: api.Meta{Namespace: "ns", Name: "w"}, PodSets: []api.PodSet{{Name: "p", Count: 1, Requests: resourcesOneGPU()}}})
	c.Nodes(first)
	c.Fill(s)
	again, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes(again)
	if c.Fill(s) {
		t.Fatal("a new snapshot of the same nodes rebuilt the statistics")
	}
	nodes[0].Labels = map[string]string{"gantry.dev/node-pool": "other"}
	changed, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Nodes(changed)
	if !c.Fill(s) {
		t.Fatal("a node's new labels did not rebuild the statistics")
	}
}
