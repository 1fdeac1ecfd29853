package engine

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// fakeQuota counts CPU per ClusterQueue: a workload fits while usage+request <= limit;
// over the limit it is Preempt when victims are configured, else NoFit.
type fakeQuota struct {
	limit   map[string]resources.Amount
	used    map[string]resources.Amount
	share   map[string]int64
	victims map[api.WorkloadID][]api.WorkloadID
}

func newFakeQuota() *fakeQuota {
	return &fakeQuota{limit: map[string]resources.Amount{}, used: map[string]resources.Amount{}, share: map[string]int64{}, victims: map[api.WorkloadID][]api.WorkloadID{}}
}

func (q *fakeQuota) Assign(w *api.Workload, cq string) admission.Assignment {
	need := w.TotalRequests()[resources.CPU]
	a := admission.Assignment{Workload: w.ID(), ClusterQueue: cq, Mode: admission.Fit}
	for _, ps := range w.PodSets {
		a.PodSets = append(a.PodSets, admission.PodSetAssignment{Name: ps.Name, Count: ps.Count, Mode: admission.Fit,
			Resources: []admission.ResourceAssignment{{Resource: resources.CPU, Flavor: "default", Amount: ps.Requests[resources.CPU] * resources.Amount(ps.Count)}}})
	}
	if q.used[cq]+need > q.limit[cq] {
		a.Mode, a.Code, a.Message = admission.NoFit, admission.WaitingForQuota, fmt.Sprintf("needs %d cpu, %d free", need, q.limit[cq]-q.used[cq])
		if len(q.victims[w.ID()]) > 0 {
			a.Mode, a.Code = admission.Preempt, admission.WaitingForPreemption
		}
	}
	return a
}

// AssignWithout ignores the exclusions: the fake has a single flavor.
func (q *fakeQuota) AssignWithout(w *api.Workload, cq string, _ map[string]bool) admission.Assignment {
	return q.Assign(w, cq)
}

func (q *fakeQuota) Victims(w *api.Workload, a admission.Assignment) admission.PreemptionResult {
	var res admission.PreemptionResult
	for _, v := range q.victims[w.ID()] {
		res.Victims = append(res.Victims, admission.Victim{Workload: v, ClusterQueue: a.ClusterQueue})
	}
	return res
}

func (q *fakeQuota) Admit(w *api.Workload, a admission.Assignment) error {
	q.used[a.ClusterQueue] += w.TotalRequests()[resources.CPU]
	return nil
}

func (q *fakeQuota) Share(cq string) int64 { return q.share[cq] }

func (q *fakeQuota) Short(Pending) bool { return false }

// The fake holds nothing in a cycle: its CPU count has no cohorts to lend from.
func (q *fakeQuota) AssignBlocked(w *api.Workload, cq string) admission.Assignment {
	return q.Assign(w, cq)
}

func (q *fakeQuota) FitsAfter(admission.Assignment, []admission.Assignment, []api.WorkloadID) bool {
	return true
}

func (q *fakeQuota) MayHold(string) bool { return false }

func (q *fakeQuota) WithHeld([]admission.Assignment) Quota { return q }

func (q *fakeQuota) FitsHeld(admission.Assignment, []admission.FlavorAmount, []admission.Assignment, []api.WorkloadID) bool {
	return true
}

func (q *fakeQuota) Hold(string, []admission.FlavorAmount) {}

func (q *fakeQuota) ShortHeld(Pending, []admission.FlavorAmount) bool { return false }

func (q *fakeQuota) Unreclaimable(admission.Assignment) []admission.FlavorAmount { return nil }

// fakePlacer places pods first-fit on CPU, in node order, on the overlay itself, so the
// engine's Mark/Undo really apply.
type fakePlacer struct {
	victims map[api.WorkloadID][]api.WorkloadID // Preempt answers
	eta     map[api.WorkloadID]time.Duration    // Reserve answers: ETA from now on node "n0"
	calls   int
}

func (p *fakePlacer) Place(c PlaceCall) PlaceResult {
	ov, w := c.Overlay, c.Workload
	p.calls++
	m := ov.Mark()
	var bs []plan.Binding
	for _, ps := range w.PodSets {
		for k := 0; k < int(ps.Count); k++ {
			ref := cluster.PodRef{Workload: w.ID(), PodSet: ps.Name, Index: k}
			placed := false
			for i := 0; i < ov.NumNodes() && !placed; i++ {
				if ov.AssumeAt(ref, i, ps.Requests, emptyAssignment()) == nil {
					bs = append(bs, plan.Binding{Workload: w.ID(), PodSet: ps.Name, Index: k, Pod: fmt.Sprintf("%s-%d", w.Name, k), Node: ov.Node(i).Name, Requests: ps.Requests})
					placed = true
				}
			}
			if !placed {
				ov.Undo(m)
				return PlaceResult{Failure: &plan.PlaceFailure{Code: plan.ReasonNoNodeFits, Message: fmt.Sprintf("pod %d: 0 of %d nodes have the cpu", k, ov.NumNodes())}}
			}
		}
	}
	return PlaceResult{OK: true, Bindings: bs}
}

func (p *fakePlacer) Preempt(c PlaceCall) PreemptResult {
	allowed := map[api.WorkloadID]bool{}
	for _, r := range c.Running {
		allowed[r.ID] = true
	}
	var out PreemptResult
	for _, v := range p.victims[c.Workload.ID()] {
		if allowed[v] {
			out.Victims = append(out.Victims, v)
		}
	}
	return out
}

func (p *fakePlacer) Reserve(c PlaceCall) (plan.Reservation, bool) {
	d, ok := p.eta[c.Workload.ID()]
	if !ok {
		return plan.Reservation{}, false
	}
	return plan.Reservation{Nodes: []string{"n0"}, ETA: c.Now.Add(d)}, true
}

var (
	_ Quota  = (*fakeQuota)(nil)
	_ Placer = (*fakePlacer)(nil)
)
