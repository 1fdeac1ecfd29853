package report

import (
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	"pgregory.net/rapid"
)

func TestNearestRank(t *testing.T) {
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Second
	}
	tests := []struct {
		name   string
		values []time.Duration
		p      int
		// want is the smallest value with at least p% of the values at or below it.
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"single", []time.Duration{5}, 99, 5},
		{"p50 of 1..100", hundred, 50, 50 * time.Second},
		{"p95 of 1..100", hundred, 95, 95 * time.Second},
		{"p99 of 1..100", hundred, 99, 99 * time.Second},
		{"p50 of two", []time.Duration{10, 65}, 50, 10},
		{"p95 of ten rounds up", []time.Duration{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 95, 10},
	}
	for _, tc := range tests {
		if got := NearestRank(tc.values, tc.p); got != tc.want {
			t.Errorf("%s: NearestRank(p%d) = %v, want %v", tc.name, tc.p, got, tc.want)
		}
	}
}

// The nearest-rank percentile is a sample value with at least p% of the values at or below
// it and fewer than p% strictly below it.
func TestNearestRankProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		vals := rapid.SliceOfN(rapid.Int64Range(0, 1000), 1, 200).Draw(t, "values")
		p := rapid.IntRange(1, 100).Draw(t, "p")
		ds := make([]time.Duration, len(vals))
		for i, v := range vals {
			ds[i] = time.Duration(v)
		}
		slices.Sort(ds)
		got := NearestRank(ds, p)
		atOrBelow, below := 0, 0
		for _, d := range ds {
			if d <= got {
				atOrBelow++
			}
			if d < got {
				below++
			}
		}
		n := len(ds)
		if !slices.Contains(ds, got) || atOrBelow*100 < p*n || below*100 >= p*n {
			t.Fatalf("p%d of %v = %v: %d at or below, %d below", p, ds, got, atOrBelow, below)
		}
	})
}

func TestKPICollectorQueueStats(t *testing.T) {
	c := NewKPICollector(KPIOptions{})
	for _, e := range []sim.EventRecord{
		MakeEvent(0, sim.EvSubmitted, "ns/a").CQ("cq1").Obj(),
		MakeEvent(5, sim.EvSubmitted, "ns/b").CQ("cq1").Obj(),
		MakeEvent(10, sim.EvPlaced, "ns/a").CQ("cq1").Obj(),
		MakeEvent(20, sim.EvSubmitted, "ns/c").CQ("cq2").Obj(),
		MakeEvent(30, sim.EvPlaced, "ns/b").Obj(),
		MakeEvent(50, sim.EvPreempted, "ns/b").Obj(),
		MakeEvent(60, sim.EvEvicted, "ns/b").Lost(20_000).Obj(),
		MakeEvent(60, sim.EvRequeued, "ns/b").Obj(),
		MakeEvent(100, sim.EvPlaced, "ns/b").Obj(),
		MakeEvent(110, sim.EvFinished, "ns/a").Obj(),
		MakeEvent(200, sim.EvFinished, "ns/b").Obj(),
	} {
		c.OnEvent(e)
	}
	r := c.Report(secs(300))
	// a waited 10s; b waited 25s before its first start and 40s after its requeue.
	want := QueueKPIs{Name: "all", Submitted: 3, Placed: 2, Finished: 2, StillPending: 1, Preempted: 1, Evicted: 1, LostGPUMilliSeconds: 20_000}
	got := r.Overall
	if got.Name != want.Name || got.Submitted != want.Submitted || got.Placed != want.Placed || got.Finished != want.Finished ||
		got.StillPending != want.StillPending || got.Preempted != want.Preempted || got.Evicted != want.Evicted || got.LostGPUMilliSeconds != want.LostGPUMilliSeconds {
		t.Errorf("overall counts = %+v, want %+v", got, want)
	}
	if got.Wait.P50 != secs(10) || got.Wait.P95 != secs(65) || got.Wait.Mean != sim.Seconds(37500*time.Millisecond) {
		t.Errorf("wait = %+v, want p50 10s p95 65s mean 37.5s", got.Wait)
	}
	if got.JCT.P50 != secs(110) || got.JCT.Max != secs(195) || got.JCT.Mean != sim.Seconds(152500*time.Millisecond) {
		t.Errorf("jct = %+v, want p50 110s max 195s mean 152.5s", got.JCT)
	}
	if len(r.Queues) != 2 || r.Queues[0].Name != "cq1" || r.Queues[0].Finished != 2 || r.Queues[1].Name != "cq2" || r.Queues[1].StillPending != 1 {
		t.Errorf("queues = %+v", r.Queues)
	}
	if len(r.Preemptions) != 2 || r.LostGPUMilliSeconds != 20_000 || r.Preemptions[1].ClusterQueue != "cq1" {
		t.Errorf("preemptions = %+v lost %d", r.Preemptions, r.LostGPUMilliSeconds)
	}
}

func TestKPICollectorAllocationAndQuota(t *testing.T) {
	c := NewKPICollector(KPIOptions{HeatmapTimes: []sim.Seconds{secs(5), secs(15)}})
	c.OnSample(MakeState(0).Node(MakeNode("n1").GPU("T4", "exclusive", 0).GPU("T4", "exclusive", 500)).Queue("cq", 4, 2, 0).Obj())
	c.OnSample(MakeState(10).Node(MakeNode("n1").GPU("T4", "exclusive", 1000).GPU("T4", "exclusive", 1000)).Queue("cq", 4, 5, 1).Obj())
	r := c.Report(secs(20))
	// (500 × 10s + 2000 × 10s) / (2000 × 20s)
	if len(r.Allocation) != 2 || r.Allocation[0].Key != "T4/exclusive" || r.Allocation[1].Key != "all" || r.Allocation[1].MeanPermille != 625 {
		t.Fatalf("allocation = %+v, want T4/exclusive and all with mean 625‰", r.Allocation)
	}
	if n := len(r.Allocation[1].Points); n != 2 {
		t.Errorf("all series has %d points, want 2", n)
	}
	q := r.QuotaUse[0]
	// used: 2 GPUs for 10s then 5 for 10s → 3.5 GPUs; borrowed 0 then 1 → 0.5.
	if q.Nominal != 4000 || q.MeanUsed != 3500 || q.PeakUsed != 5000 || q.UtilisationPermille != 875 || q.MeanBorrowed != 500 || q.PeakBorrowed != 1000 {
		t.Errorf("quota use = %+v", q)
	}
	// The busiest moment (t=10, both GPUs full) first, then the chosen times.
	if len(r.Heatmaps) != 3 || r.Heatmaps[0].T != secs(10) || r.Heatmaps[0].Rows[0].GPUs[1] != 1000 ||
		r.Heatmaps[1].T != secs(5) || r.Heatmaps[1].Rows[0].GPUs[1] != 500 || r.Heatmaps[2].Rows[0].GPUs[0] != 1000 {
		t.Errorf("heat maps = %+v, want the busiest (t=10), the t=0 state at 5s and the t=10 state at 15s", r.Heatmaps)
	}
}

func TestFragmentationAndStranded(t *testing.T) {
	node := MakeNode("n").GPU("G2", "fractional", 0).GPU("G2", "fractional", 460).GPU("G2", "fractional", 1000)
	whole1 := GPUShape{Kind: ShapeWhole, GPUs: 1}
	whole2 := GPUShape{Kind: ShapeWhole, GPUs: 2}
	frac600 := GPUShape{Kind: ShapeFraction, Milli: 600}
	frac500 := GPUShape{Kind: ShapeFraction, Milli: 500}
	tests := []struct {
		name   string
		nodes  []sim.NodeState
		shapes []ShapeCount
		// wantFrag is FGD's expected fragment in milli-GPU.
		wantFrag resources.MilliGPU
	}{
		{"one whole GPU: the 540 piece is a fragment", []sim.NodeState{node.Obj()}, []ShapeCount{{whole1, 1}}, 540},
		{"two whole GPUs cannot run: all 1540 free is fragment", []sim.NodeState{node.Obj()}, []ShapeCount{{whole2, 1}}, 1540},
		{"mix weighted by counts", []sim.NodeState{node.Obj()}, []ShapeCount{{whole1, 3}, {whole2, 1}}, (3*540 + 1540) / 4},
		{"600m shares: the 540 piece is a fragment", []sim.NodeState{node.Obj()}, []ShapeCount{{frac600, 1}}, 540},
		{"500m shares use every free piece", []sim.NodeState{node.Obj()}, []ShapeCount{{frac500, 1}}, 0},
		{"a down node has no capacity", []sim.NodeState{MakeNode("d").GPU("G2", "fractional", 0).Down().Obj()}, []ShapeCount{{whole2, 1}}, 0},
		{"no shapes", []sim.NodeState{node.Obj()}, nil, 0},
	}
	for _, tc := range tests {
		if got := clusterFragment(tc.nodes, tc.shapes); got != tc.wantFrag {
			t.Errorf("%s: fragment = %d, want %d", tc.name, got, tc.wantFrag)
		}
	}
	if got := strandedCapacity([]sim.NodeState{node.Obj()}, []GPUShape{frac600, whole2}); got != 540 {
		t.Errorf("stranded for 600m and 2-GPU shapes = %d, want 540", got)
	}
	if got := strandedCapacity([]sim.NodeState{node.Obj()}, []GPUShape{frac500}); got != 0 {
		t.Errorf("stranded for 500m shapes = %d, want 0", got)
	}
	if got := strandedCapacity([]sim.NodeState{node.Obj()}, nil); got != 0 {
		t.Errorf("stranded without pending shapes = %d, want 0", got)
	}
}

func TestKPICollectorCapacity(t *testing.T) {
	c := NewKPICollector(KPIOptions{Shapes: []ShapeCount{{GPUShape{Kind: ShapeWhole, GPUs: 1}, 1}}})
	c.OnSample(MakeState(0).
		Node(MakeNode("a").GPU("G2", "fractional", 0).GPU("G2", "fractional", 460)).
		Node(MakeNode("b").MIG("A100-SXM4-40GB", 428, 2)).
		Pending("ns/p", resources.Vector{resources.GPUMilli: 600}).Obj())
	c.OnSample(MakeState(10).Node(MakeNode("a").GPU("G2", "fractional", 0).GPU("G2", "fractional", 1000)).Obj())
	r := c.Report(secs(20))
	first := r.Capacity[0]
	// Free: 1000 whole on a, 540 on a's shared GPU and 572 on the MIG GPU are pieces.
	// Stranded for a 600m pod: the 540 piece and the MIG GPU (fractions cannot use MIG).
	want := CapacityPoint{T: 0, Free: 2112, FreeWhole: 1000, FreePieces: 1112, Stranded: 1112, Frag: 1112}
	if first != want {
		t.Errorf("capacity at 0 = %+v, want %+v", first, want)
	}
	// Stranded 1112 for 10s then 0 (nothing pending) → mean 556.
	if r.MeanStrandedMilli != 556 || r.MeanFragMilli != 556 {
		t.Errorf("mean stranded %d frag %d, want 556 and 556", r.MeanStrandedMilli, r.MeanFragMilli)
	}
}

func TestShapesOf(t *testing.T) {
	got := sortShapes(map[GPUShape]int64{{Kind: ShapeWhole, GPUs: 2}: 1, {Kind: ShapeFraction, Milli: 500}: 3})
	if len(got) != 2 || got[0].Shape.Kind != ShapeFraction || got[1].Count != 1 {
		t.Errorf("sorted shapes = %+v", got)
	}
	for _, tc := range []struct {
		v    resources.Vector
		want GPUShape
		ok   bool
	}{
		{resources.Vector{resources.NvidiaGPU: 4}, GPUShape{Kind: ShapeWhole, GPUs: 4}, true},
		{resources.Vector{resources.GPUMilli: 2000}, GPUShape{Kind: ShapeWhole, GPUs: 2}, true},
		{resources.Vector{resources.GPUMilli: 250}, GPUShape{Kind: ShapeFraction, Milli: 250}, true},
		{resources.Vector{resources.MIGResource("1g.10gb"): 1}, GPUShape{Kind: ShapeMIG, Profile: "1g.10gb"}, true},
		{resources.Vector{resources.CPU: 1000}, GPUShape{}, false},
	} {
		got, ok := ShapeOf(tc.v)
		if got != tc.want || ok != tc.ok {
			t.Errorf("ShapeOf(%v) = %+v %v, want %+v %v", tc.v, got, ok, tc.want, tc.ok)
		}
	}
}

// The time-weighted mean allocation lies between the smallest and largest sampled ratio.
func TestAllocationMeanProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 20).Draw(t, "samples")
		c := NewKPICollector(KPIOptions{})
		lo, hi := int64(1000), int64(0)
		var at int64
		for i := 0; i < n; i++ {
			a := resources.MilliGPU(rapid.Int64Range(0, 2000).Draw(t, "allocated"))
			c.OnSample(MakeState(at).Node(MakeNode("n").GPU("T4", "fractional", min(a, 1000)).GPU("T4", "fractional", max(a-1000, 0))).Obj())
			p := int64(a) * 1000 / 2000
			lo, hi = min(lo, p), max(hi, p)
			at += rapid.Int64Range(1, 100).Draw(t, "gap")
		}
		got := c.Report(secs(at)).Allocation
		mean := got[len(got)-1].MeanPermille
		if got[len(got)-1].Key != "all" || mean < lo || mean > hi {
			t.Fatalf("mean %d‰ outside [%d, %d]", mean, lo, hi)
		}
	})
}

// Without a configured distribution, FGD uses the shapes seen pending, each pod set once.
func TestKPICollectorLearnsPendingShapes(t *testing.T) {
	c := NewKPICollector(KPIOptions{})
	node := MakeNode("a").GPU("G2", "fractional", 0).GPU("G2", "fractional", 460)
	c.OnSample(MakeState(0).Node(node).Pending("ns/p", resources.Vector{resources.GPUMilli: 600}).Obj())
	c.OnSample(MakeState(5).Node(node).Pending("ns/p", resources.Vector{resources.GPUMilli: 600}).
		Pending("ns/q", resources.Vector{resources.NvidiaGPU: 2}).Obj())
	want := []ShapeCount{{GPUShape{Kind: ShapeFraction, Milli: 600}, 1}, {GPUShape{Kind: ShapeWhole, GPUs: 2}, 1}}
	if got := c.fragShapes(); !slices.Equal(got, want) {
		t.Fatalf("learned shapes = %+v, want %+v", got, want)
	}
	// At 5s: the 540 piece is a fragment for 600m pods; nothing fits a 2-GPU pod (1540).
	if got := c.Report(secs(10)).Capacity[1].Frag; got != (540+1540)/2 {
		t.Errorf("fragment at 5s = %d, want %d", got, (540+1540)/2)
	}
}
