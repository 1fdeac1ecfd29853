package placement

import (
	"fmt"
	"testing"
	"time"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// peNow is the fixed "now" origin of every preemption and reservation test.
var peNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

// runningWrapper builds a Running value fluently:
// MakeRunning("team-a/train").Priority(1).Spot().GPUs(8).Obj().
type runningWrapper struct{ r Running }

func MakeRunning(id string) *runningWrapper {
	return &runningWrapper{r: Running{
		ID: api.WorkloadID(id), Queue: "cq", CapacityType: api.CapacityOnDemand,
		Created: peNow.Add(-2 * time.Hour), StartedAt: peNow.Add(-time.Hour), Preemptible: true,
	}}
}

func (w *runningWrapper) Queue(q string) *runningWrapper      { w.r.Queue = q; return w }
func (w *runningWrapper) Priority(p int32) *runningWrapper    { w.r.Priority = p; return w }
func (w *runningWrapper) Spot() *runningWrapper               { w.r.CapacityType = api.CapacitySpot; return w }
func (w *runningWrapper) Started(t time.Time) *runningWrapper { w.r.StartedAt = t; return w }
func (w *runningWrapper) Created(t time.Time) *runningWrapper { w.r.Created = t; return w }
func (w *runningWrapper) Checkpoint(t time.Time) *runningWrapper {
	w.r.LastCheckpoint = t
	return w
}
func (w *runningWrapper) MinRuntime(d time.Duration) *runningWrapper { w.r.MinRuntime = d; return w }
func (w *runningWrapper) NotPreemptible() *runningWrapper            { w.r.Preemptible = false; return w }
func (w *runningWrapper) Ends(t time.Time) *runningWrapper           { w.r.ExpectedEnd = t; return w }
func (w *runningWrapper) Grace(d time.Duration) *runningWrapper      { w.r.GracePeriod = d; return w }

// GPUs sets the GPU the whole gang holds, in whole GPUs.
func (w *runningWrapper) GPUs(n int64) *runningWrapper {
	w.r.GPUMilli = resources.MilliGPU(n) * resources.MilliPerGPU
	return w
}

// PodsN gives the gang n pods of pod set "main".
func (w *runningWrapper) PodsN(n int) *runningWrapper {
	w.r.Pods = w.r.Pods[:0]
	for i := 0; i < n; i++ {
		w.r.Pods = append(w.r.Pods, cluster.PodRef{Workload: w.r.ID, PodSet: "main", Index: i})
	}
	return w
}

func (w *runningWrapper) Obj() Running { return w.r }

// peFake is a small exact model for the search: nodes with free whole GPUs, gangs
// holding GPUs per node, and a preemptor gang of pods identical pods needing per GPUs
// each on one node. Marks and undo work through a journal, like the overlay.
type peFake struct {
	free    []int
	holds   map[api.WorkloadID][]int // per node GPUs a gang holds
	pods    int
	per     int
	journal []api.WorkloadID
	fitCall int
}

var _ whatIf = (*peFake)(nil)

func (f *peFake) mark() int { return len(f.journal) }

func (f *peFake) undo(m int) {
	for len(f.journal) > m {
		id := f.journal[len(f.journal)-1]
		f.journal = f.journal[:len(f.journal)-1]
		for n, g := range f.holds[id] {
			f.free[n] -= g
		}
	}
}

func (f *peFake) check(r *Running) error {
	if _, ok := f.holds[r.ID]; !ok {
		return fmt.Errorf("running workload %s: not in the fake cluster", r.ID)
	}
	return nil
}

func (f *peFake) release(r *Running) error {
	h, ok := f.holds[r.ID]
	if !ok {
		return fmt.Errorf("running workload %s: not in the fake cluster", r.ID)
	}
	for _, id := range f.journal {
		if id == r.ID {
			return fmt.Errorf("running workload %s: already released", r.ID)
		}
	}
	for n, g := range h {
		f.free[n] += g
	}
	f.journal = append(f.journal, r.ID)
	return nil
}

// touches is always true: the model has no placements, so nothing is pruned.
func (f *peFake) touches(*Running) bool { return true }

func (f *peFake) fits() bool {
	f.fitCall++
	slots := 0
	for _, g := range f.free {
		slots += g / f.per
	}
	return slots >= f.pods
}

// peNodes builds n nodes "n00".. of gpus whole H100 GPUs each, with room for 110 pods;
// spot lists nodes labelled as spot capacity.
func peNodes(t testing.TB, n, gpus int, spot ...string) []cluster.Node {
	t.Helper()
	isSpot := map[string]bool{}
	for _, s := range spot {
		isSpot[s] = true
	}
	out := make([]cluster.Node, 0, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%02d", i)
		b := gt.MakeNode(name).GPUs("H100", gpus).Label(api.LabelCapacityType, api.CapacityOnDemand)
		if isSpot[name] {
			b.Spot().Label(api.LabelCapacityType, api.CapacitySpot)
		}
		out = append(out, b.Obj())
	}
	return out
}

// peGPUReq is a pod's requests for n whole GPUs and one CPU.
func peGPUReq(n int) resources.Vector {
	return resources.Vector{resources.CPU: 1000, resources.NvidiaGPU: resources.Amount(n)}
}

// peGang describes a running gang for peBind: one pod of perPod GPUs on each listed
// node (a node listed twice gets two pods).
type peGang struct {
	run    Running
	perPod int
	nodes  []string
}

// peBind binds every gang's pods on a fresh snapshot of nodes and fills in each
// Running's Pods and GPUMilli from what was bound.
func peBind(t testing.TB, nodes []cluster.Node, gangs []peGang) (*cluster.Snapshot, []Running) {
	t.Helper()
	snap, err := cluster.NewSnapshot(nodes, nil)
	if err != nil {
		t.Fatal(err)
	}
	ov := snap.Overlay()
	var running []Running
	for _, g := range gangs {
		r := g.run
		r.Pods, r.GPUMilli = nil, 0
		for k, node := range g.nodes {
			ref := cluster.PodRef{Workload: r.ID, PodSet: "main", Index: k}
			if err := peAssume(ov, ref, peGPUReq(g.perPod), node); err != nil {
				t.Fatalf("binding %s: %v", ref, err)
			}
			r.Pods = append(r.Pods, ref)
			r.GPUMilli += resources.MilliGPU(g.perPod) * resources.MilliPerGPU
		}
		running = append(running, r)
	}
	return ov.Snapshot(), running
}

// peAssume assumes pod ref with requests on node (any node when node is ""),
// trying nodes in index order; the device layer picks the GPUs.
func peAssume(ov *cluster.Overlay, ref cluster.PodRef, req resources.Vector, node string) error {
	dr, err := devices.ParseRequest(req)
	if err != nil {
		return err
	}
	for i := 0; i < ov.NumNodes(); i++ {
		if node != "" && ov.Node(i).Name != node {
			continue
		}
		nd := ov.Devices(i)
		if nd == nil {
			continue
		}
		a, refusal := nd.Fit(dr)
		if refusal != nil {
			continue
		}
		if ov.AssumeAt(ref, i, req, a) == nil {
			return nil
		}
	}
	return fmt.Errorf("pod %s: no node fits %s", ref, req)
}

// peFirstFit is a simple GangFit for tests: pods pods of perPod GPUs, first fit in
// node order, all or nothing.
func peFirstFit(id api.WorkloadID, pods, perPod int) GangFit {
	return func(ov *cluster.Overlay) (*Placement, bool) {
		m := ov.Mark()
		for k := 0; k < pods; k++ {
			ref := cluster.PodRef{Workload: id, PodSet: "main", Index: k}
			if peAssume(ov, ref, peGPUReq(perPod), "") != nil {
				ov.Undo(m)
				return nil, false
			}
		}
		return &Placement{Workload: id}, true
	}
}
