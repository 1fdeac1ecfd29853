package report

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	"pgregory.net/rapid"
)

// Property: over random sequences of cluster states, a collector fed only what changed
// (OnDelta) and one fed whole states (OnSample) hold, after every sample, the allocation
// sums, capacity point and quota points computed from scratch over the whole state;
// their reports are equal, and their means equal the per-sample integrals. In some
// worlds nodes also vanish from the state, which only whole states can say.
func TestIncrementalKPIsMatchFromScratch(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		w := drawKPIWorld(rt)
		opts := drawKPIOptions(rt)
		inc, full, ref := NewKPICollector(opts), NewKPICollector(opts), newScratchKPIs(opts)
		var prev *sim.ClusterState
		steps := rapid.IntRange(1, 25).Draw(rt, "steps")
		for i := 0; i < steps; i++ {
			s := w.step(rt, i)
			if !w.vanish {
				inc.OnDelta(deltaOf(rt, prev, s))
			}
			full.OnSample(s)
			ref.sample(s)
			for _, c := range w.collectors(inc, full) {
				if err := ref.check(c); err != nil {
					rt.Fatalf("sample %d at %v: %v", i, s.T.Duration(), err)
				}
			}
			prev = &s
		}
		end := prev.T + sim.Seconds(rapid.Int64Range(0, 5000).Draw(rt, "tailMs"))*sim.Seconds(time.Millisecond)
		got := full.Report(end)
		if err := ref.checkReport(got, end); err != nil {
			rt.Fatal(err)
		}
		if want := inc.Report(end); !w.vanish && !reflect.DeepEqual(got, want) {
			rt.Fatalf("reports differ:\nstates %+v\ndeltas %+v", got, want)
		}
	})
}

// collectors are the collectors the world can feed: both, or the whole-state one only.
func (w *kpiWorld) collectors(inc, full *KPICollector) []*KPICollector {
	if w.vanish {
		return []*KPICollector{full}
	}
	return []*KPICollector{inc, full}
}

// kpiWorld draws a sequence of states: fixed node names whose rows change, workloads
// with fixed pod sets that come and go, queues whose usage changes.
type kpiWorld struct {
	names   []string
	rows    map[string][]sim.NodeState
	pods    map[string][]sim.PendingShape
	pending map[string]bool
	queues  map[string]sim.QueueState
	t       sim.Seconds
	vanish  bool // nodes may drop out of the state (and come back)
}

func drawKPIWorld(rt *rapid.T) *kpiWorld {
	w := &kpiWorld{rows: map[string][]sim.NodeState{}, pods: map[string][]sim.PendingShape{}, pending: map[string]bool{}, queues: map[string]sim.QueueState{},
		vanish: rapid.IntRange(0, 3).Draw(rt, "vanish") == 0}
	for i := range rapid.IntRange(1, 5).Draw(rt, "nodes") {
		w.names = append(w.names, fmt.Sprintf("n%d", i))
	}
	for i := range rapid.IntRange(0, 5).Draw(rt, "workloads") {
		name := fmt.Sprintf("ns/w%d", i)
		for range rapid.IntRange(1, 2).Draw(rt, "podSets") {
			w.pods[name] = append(w.pods[name], sim.PendingShape{Workload: name, Pods: rapid.IntRange(0, 3).Draw(rt, "pods"), PerPod: drawPerPod(rt)})
		}
	}
	for i := range rapid.IntRange(0, 3).Draw(rt, "queues") {
		name := fmt.Sprintf("cq%d", i)
		w.queues[name] = sim.QueueState{Name: name}
	}
	return w
}

func drawPerPod(rt *rapid.T) resources.Vector {
	return rapid.SampledFrom([]resources.Vector{
		{resources.NvidiaGPU: 1}, {resources.NvidiaGPU: 2}, {resources.GPUMilli: 250}, {resources.GPUMilli: 600},
		{resources.GPUMilli: 2000}, {resources.MIGResource("1g.10gb"): 1}, {resources.NvidiaGPUShared: 1}, {resources.CPU: 1000},
	}).Draw(rt, "perPod")
}

// step moves time on (sometimes by less than a millisecond, or not at all) and redraws
// some nodes, pending workloads and queues.
func (w *kpiWorld) step(rt *rapid.T, i int) sim.ClusterState {
	if i > 0 {
		w.t += sim.Seconds(rapid.SampledFrom([]time.Duration{0, 400 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond, time.Second, 7 * time.Second, time.Minute}).Draw(rt, "gap"))
	}
	s := sim.ClusterState{T: w.t}
	for _, name := range w.names {
		if i == 0 || rapid.IntRange(0, 2).Draw(rt, "redraw") == 0 {
			w.rows[name] = drawRows(rt, name)
		}
		if w.vanish && rapid.IntRange(0, 3).Draw(rt, "absent") == 0 {
			continue
		}
		s.Nodes = append(s.Nodes, w.rows[name]...)
	}
	for _, name := range slices.Sorted(maps.Keys(w.pods)) {
		if rapid.IntRange(0, 2).Draw(rt, "toggle") == 0 {
			w.pending[name] = !w.pending[name]
		}
		if w.pending[name] {
			s.Pending = append(s.Pending, w.pods[name]...)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(w.queues)) {
		if i == 0 || rapid.IntRange(0, 2).Draw(rt, "requota") == 0 {
			w.queues[name] = drawQueue(rt, name)
		}
		s.Queues = append(s.Queues, w.queues[name])
	}
	return s
}

// drawRows is a node's row, now and then followed by an offline row of the same name.
func drawRows(rt *rapid.T, name string) []sim.NodeState {
	n := sim.NodeState{Name: name, Ready: rapid.IntRange(0, 4).Draw(rt, "ready") > 0}
	for g := range rapid.IntRange(0, 4).Draw(rt, "gpus") {
		n.GPUs = append(n.GPUs, sim.GPUState{Index: g,
			Model:      rapid.SampledFrom([]string{"G2", "T4"}).Draw(rt, "model"),
			Mode:       rapid.SampledFrom([]string{"exclusive", "fractional", "fractional", "mig", "time-slicing", ""}).Draw(rt, "mode"),
			Allocated:  resources.MilliGPU(rapid.SampledFrom([]int64{0, 0, 250, 460, 1000, 1200}).Draw(rt, "allocated")),
			FreePieces: rapid.IntRange(0, 2).Draw(rt, "freePieces"),
			Healthy:    rapid.IntRange(0, 5).Draw(rt, "healthy") > 0})
	}
	rows := []sim.NodeState{n}
	if rapid.IntRange(0, 5).Draw(rt, "offlineToo") == 0 {
		rows = append(rows, sim.NodeState{Name: name})
	}
	return rows
}

func drawQueue(rt *rapid.T, name string) sim.QueueState {
	v := func(label string) resources.Vector {
		return resources.Vector{resources.NvidiaGPU: resources.Amount(rapid.IntRange(0, 8).Draw(rt, label+"GPUs")),
			resources.GPUMilli: resources.Amount(rapid.SampledFrom([]int64{0, 500, 3000}).Draw(rt, label+"Milli"))}
	}
	return sim.QueueState{Name: name, Nominal: v("nominal"), Usage: v("usage"), Borrowed: v("borrowed")}
}

func drawKPIOptions(rt *rapid.T) KPIOptions {
	var o KPIOptions
	if rapid.Bool().Draw(rt, "configuredShapes") {
		o.Shapes = []ShapeCount{{GPUShape{Kind: ShapeWhole, GPUs: 1}, 3}, {GPUShape{Kind: ShapeFraction, Milli: 600}, 2}, {GPUShape{Kind: ShapeWhole, GPUs: 2}, 1}}
	}
	o.CapacityEvery = rapid.SampledFrom([]time.Duration{0, 0, 10 * time.Second}).Draw(rt, "capacityEvery")
	if rapid.Bool().Draw(rt, "heatmapTimes") {
		o.HeatmapTimes = []sim.Seconds{secs(3), secs(8), secs(40), secs(500)}
	}
	return o
}

// deltaOf is what a simulator would send: every node, queue and pending workload the
// first time, then the changed ones plus some unchanged ones (a delta may repeat).
func deltaOf(rt *rapid.T, prev *sim.ClusterState, s sim.ClusterState) sim.StateDelta {
	d := sim.StateDelta{T: s.T}
	if prev == nil {
		d.Nodes, d.Queues, d.Pending = s.Nodes, s.Queues, s.Pending
		return d
	}
	was, now := rowsByName(prev.Nodes), rowsByName(s.Nodes)
	for _, name := range slices.Sorted(maps.Keys(now)) {
		if !slices.EqualFunc(was[name], now[name], sameNode) || rapid.IntRange(0, 3).Draw(rt, "repeatNode") == 0 {
			d.Nodes = append(d.Nodes, now[name]...)
		}
	}
	for i, q := range s.Queues {
		if !reflect.DeepEqual(q, prev.Queues[i]) || rapid.IntRange(0, 3).Draw(rt, "repeatQueue") == 0 {
			d.Queues = append(d.Queues, q)
		}
	}
	before, after := pendingByName(prev.Pending), pendingByName(s.Pending)
	for _, name := range slices.Sorted(maps.Keys(before)) {
		if _, still := after[name]; !still {
			d.Resolved = append(d.Resolved, name)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(after)) {
		if _, had := before[name]; !had {
			d.Pending = append(d.Pending, after[name]...)
		}
	}
	return d
}

func rowsByName(rows []sim.NodeState) map[string][]sim.NodeState {
	out := map[string][]sim.NodeState{}
	for _, r := range rows {
		out[r.Name] = append(out[r.Name], r)
	}
	return out
}

func pendingByName(ps []sim.PendingShape) map[string][]sim.PendingShape {
	out := map[string][]sim.PendingShape{}
	for _, p := range ps {
		out[p.Workload] = append(out[p.Workload], p)
	}
	return out
}

// A shape learned while capacity points are thinned, pending only between two points,
// still weighs on the next point's fragmentation over nodes that did not change.
func TestThinnedCapacityCountsShapesLearnedInBetween(t *testing.T) {
	c := NewKPICollector(KPIOptions{CapacityEvery: 10 * time.Second})
	node := MakeNode("a").GPU("G2", "fractional", 0).GPU("G2", "fractional", 460).Obj()
	c.OnDelta(sim.StateDelta{T: secs(0), Nodes: []sim.NodeState{node}})
	c.OnDelta(sim.StateDelta{T: secs(1), Pending: []sim.PendingShape{{Workload: "ns/p", Pods: 1, PerPod: resources.Vector{resources.GPUMilli: 600}}}})
	c.OnDelta(sim.StateDelta{T: secs(2), Resolved: []string{"ns/p"}})
	c.OnDelta(sim.StateDelta{T: secs(20)})
	r := c.Report(secs(30))
	// The 540 left on the shared GPU is a fragment for 600m pods.
	if len(r.Capacity) != 2 || r.Capacity[0].Frag != 0 || r.Capacity[1].Frag != 540 {
		t.Errorf("capacity points %+v, want fragmentation 0 then 540", r.Capacity)
	}
}

// A whole state whose rows are out of order keeps every row of a name.
func TestUnorderedRowsKeepEveryRow(t *testing.T) {
	c := NewKPICollector(KPIOptions{})
	c.OnSample(MakeState(0).Node(MakeNode("a").GPU("T4", "exclusive", 1000)).Node(MakeNode("b").GPU("T4", "exclusive", 0)).
		Node(MakeNode("a").GPU("T4", "exclusive", 500)).Obj())
	r := c.Report(secs(10))
	end := r.Heatmaps[len(r.Heatmaps)-1]
	if len(end.Rows) != 3 || end.Rows[0].Node != "a" || end.Rows[1].Node != "a" || end.Rows[1].GPUs[0] != 500 || r.Allocation[1].Points[0].Allocated != 1500 {
		t.Errorf("heat map %+v, allocation %+v; want a's two rows, then b, with 1500 allocated", end, r.Allocation)
	}
}
