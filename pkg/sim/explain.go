package sim

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
)

// Explanation is the state of one workload at a time: which layer holds it and why, its
// queue position and ETA, or where it runs.
type Explanation struct {
	Workload     string      `json:"workload"`
	T            Seconds     `json:"t"`
	Phase        plan.Phase  `json:"phase"`
	Submitted    bool        `json:"submitted"`
	ClusterQueue string      `json:"clusterQueue,omitempty"`
	Layer        string      `json:"layer,omitempty"`    // layer holding a pending workload
	Reason       string      `json:"reason,omitempty"`   // stable code
	Details      []string    `json:"details,omitempty"`  // quota per flavor/resource, placement counts per dimension
	Remedy       string      `json:"remedy,omitempty"`   // the cheapest change that would admit it (plan.Rejection.Remedy)
	Position     int         `json:"position,omitempty"` // 1-based position in its ClusterQueue (pending only)
	ETA          *Seconds    `json:"eta,omitempty"`      // from the reservation, or estimated from quota (ETABasis says which)
	ETABasis     string      `json:"etaBasis,omitempty"`
	Pods         []PodRecord `json:"pods,omitempty"`
	Progress     Seconds     `json:"progress"` // work done so far (saved progress while pending)
	Preemptions  int         `json:"preemptions"`
}

// Explain describes a workload at the current simulated time.
func (s *Simulator) Explain(id api.WorkloadID) (Explanation, error) {
	st, ok := s.wls[id]
	if !ok {
		return Explanation{}, fmt.Errorf("workload %s: not found in the manifests", id)
	}
	e := Explanation{Workload: string(id), T: Seconds(s.now), Phase: st.phase, Submitted: st.submitted,
		ClusterQueue: st.clusterQueue, Progress: Seconds(st.progressAt(s.now)), Preemptions: st.preemptions}
	for _, b := range st.bindings {
		e.Pods = append(e.Pods, PodRecord{Name: b.Pod, Node: b.Node, Devices: b.Devices})
	}
	if line := st.assignment.PartialText(); line != "" && st.phase != plan.Pending && st.phase != plan.Finished {
		e.Details = append(e.Details, line) // "admitted 9 of 20 pods (partial admission)"
	}
	resv, reserved := s.sched.Reservation(id)
	last, rejected := s.sched.LastRejection(id)
	switch {
	case !st.submitted:
		e.Reason = fmt.Sprintf("NotSubmitted: submitted at %s", FormatDuration(Seconds(st.w.Timing.SubmitAt)))
	case reserved:
		e.Layer, e.Reason = string(plan.LayerPlacement), string(placement.Reserved)
		e.Details = append([]string{resv.Reason}, "reserved nodes: "+strings.Join(resv.Nodes, ","))
		e.ETA = etaSeconds(resv.ETA)
		e.ETABasis = engine.ReservationETABasis
	case rejected && st.phase == plan.Pending:
		r := last
		e.Layer, e.Reason, e.Details, e.Position = string(r.Layer), string(r.Reason), r.Explain(), r.Position
		e.Remedy = r.Remedy()
		if r.Layer == plan.LayerAdmission {
			e.ETA, e.ETABasis = s.quotaETA(st)
		}
	}
	if nf := s.neverFit.marked[id]; nf != nil && st.phase == plan.Pending {
		// The rejection says why not now; the mark says why never, which is what to fix.
		e.Layer, e.Reason, e.Remedy = string(plan.LayerPlacement), string(plan.ReasonNeverFits), nf.Remedy()
		e.Details = append([]string{nf.Detail()}, e.Details...)
		e.ETA, e.ETABasis = nil, ""
	}
	s.explainChecks(st, &e) // provision_explain.go
	if park := s.sched.Parked(id); st.phase == plan.Pending && park != engine.NotParked {
		e.Details = append(e.Details, "parked as inadmissible: retried only when "+park.String())
	}
	return e, nil
}
