package plan

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Remedy is the cheapest change that would let the workload in, in words, read off the
// same evidence Explain renders: the least quota to add in one flavor, the queue setting
// that holds it, what the nearest node lacks. It is "" where waiting is the only remedy
// (victims leaving, a backoff, a reservation; the ETA says how long) or where nothing
// typed backs one. Like Explain, it is the one place this text is made: the Workload
// status, `gantry explain` and the dashboard all show it.
func (r Rejection) Remedy() string {
	if s := r.queueRemedy(); s != "" {
		return s
	}
	e := r.Evidence
	if e == nil {
		return ""
	}
	if e.Quota != nil && !e.Quota.Fits() {
		if s := quotaRemedy(e.Quota, r.ClusterQueue); s != "" {
			return s
		}
	}
	if e.Place == nil {
		return ""
	}
	out := e.Place.remedy()
	if alt := fallbackRemedy(e.Fallbacks, r.ClusterQueue); alt != "" {
		if out == "" {
			return alt
		}
		out += "; or " + alt
	}
	return out
}

// fallbackRemedy is the quota a flavor tried after the first did not fit the nodes
// lacks: the other way in.
func fallbackRemedy(fbs []Fallback, cq string) string {
	for _, fb := range fbs {
		if fb.Quota == nil || fb.Quota.Fits() {
			continue
		}
		if s := quotaRemedy(fb.Quota, cq); s != "" {
			return "without flavor " + strings.Join(fb.Without, ",") + ": " + s
		}
	}
	return ""
}

// queueRemedy covers the reasons decided by queue settings, not by capacity.
func (r Rejection) queueRemedy() string {
	switch r.Reason {
	case ReasonQueueHeld:
		return "set spec.stopPolicy: None on the queue that holds it (ClusterQueue " + r.ClusterQueue + " or its LocalQueue)"
	case ReasonNamespaceNotSelected:
		return "label the namespace so that ClusterQueue " + r.ClusterQueue + "'s namespaceSelector selects it, or submit through a LocalQueue of another ClusterQueue"
	case ReasonQueueMissing:
		if e := r.Evidence; e != nil && e.Unresolved != nil {
			return fmt.Sprintf("create LocalQueue %s in namespace %s, pointing at a ClusterQueue", e.Unresolved.Name, e.Unresolved.Namespace)
		}
		return "create the LocalQueue the workload names (kueue.x-k8s.io/queue-name), pointing at a ClusterQueue"
	case ReasonClusterQueueMissing:
		return "create the ClusterQueue its LocalQueue points at, or point the LocalQueue at an existing one"
	case ReasonBlockedByHead:
		return "the head of StrictFIFO ClusterQueue " + r.ClusterQueue + " must start first; queueingStrategy BestEffortFIFO lets later workloads pass it"
	case ReasonRequeuingLimitExceeded:
		return "fix what makes the job fail, then update the workload: the requeue limit stopped its retries"
	}
	return ""
}

// quotaChange is quota one flavor lacks for one resource.
type quotaChange struct {
	why   admission.Why
	short resources.Amount
}

// quotaRemedy picks, among the flavors tried for the pod sets that did not fit, the one
// that needs the fewest quota changes (then the first tried: the ClusterQueue's own
// preference) and says how much to add. Flavors refused for other reasons than quota
// (node labels, taints) offer no quota remedy and are passed over.
func quotaRemedy(a *admission.Assignment, cq string) string {
	var best []quotaChange
	for _, ps := range a.PodSets {
		if ps.Mode >= admission.Borrow {
			continue
		}
		for _, t := range ps.Tried {
			if changes, ok := quotaChanges(t); ok && (best == nil || len(changes) < len(best)) {
				best = changes
			}
		}
	}
	if len(best) == 0 {
		return ""
	}
	parts := make([]string, len(best))
	for i, c := range best {
		parts[i] = c.String(cq)
	}
	return strings.Join(parts, "; ")
}

// quotaChanges lists what attempt t lacks; ok is false when something other than quota
// refused it, or nothing did.
func quotaChanges(t admission.FlavorAttempt) ([]quotaChange, bool) {
	var out []quotaChange
	for _, w := range t.Reasons {
		switch w.Kind {
		case admission.WhyFits, admission.WhyBorrows, admission.WhyNoPreemption: // no shortfall of their own
		case admission.WhyNoQuota:
			out = append(out, quotaChange{why: w})
		case admission.WhyExceedsMax:
			out = append(out, quotaChange{why: w, short: w.Amount - w.Limit})
		case admission.WhyShort:
			out = append(out, quotaChange{why: w, short: w.Amount - w.Free - lendable(w)})
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// lendable is what the cohort could still lend toward w's request.
func lendable(w admission.Why) resources.Amount {
	if w.NoBorrow == admission.CohortShort {
		return max(0, w.Lendable)
	}
	return 0
}

func (c quotaChange) String(cq string) string {
	w := c.why
	f := func(a resources.Amount) string { return resources.FormatReadable(w.Resource, a) }
	if w.ClusterQueue != "" {
		cq = w.ClusterQueue
	}
	switch w.Kind {
	case admission.WhyNoQuota:
		return fmt.Sprintf("add %s to flavor %s of ClusterQueue %s (at least %s)", w.Resource, w.Flavor, cq, f(w.Amount))
	case admission.WhyExceedsMax:
		return fmt.Sprintf("raise ClusterQueue %s's %s in flavor %s by %s: nominalQuota %s, at most %s with borrowing, and one request needs %s",
			cq, w.Resource, w.Flavor, f(c.short), f(w.Nominal), f(w.Limit), f(w.Amount))
	}
	lend := "let its cohort lend that much"
	switch w.NoBorrow {
	case admission.NotInCohort:
		lend = "put it in a cohort that lends that much"
	case admission.BorrowLimitReached:
		lend = fmt.Sprintf("raise its borrowingLimit (%s) by that much", f(w.BorrowLimit))
	}
	return fmt.Sprintf("%s more %s in flavor %s: raise ClusterQueue %s's nominalQuota (%s) by %s, %s, or wait for running workloads to free it",
		f(c.short), w.Resource, w.Flavor, cq, f(w.Nominal), f(c.short), lend)
}

// remedy is what the nodes lack for the gang, from the placement failure's evidence.
func (f *PlaceFailure) remedy() string {
	switch {
	case f.NeedGPU > 0:
		// Rounded up to whole GPUs: the unit capacity is added or freed in.
		more := (f.NeedGPU - f.FreeGPU + resources.MilliPerGPU - 1) / resources.MilliPerGPU
		return fmt.Sprintf("%d more GPU(s) free at once: wait for running workloads to end, or add GPU nodes", more)
	case f.Room != nil:
		return fmt.Sprintf("room for %d more pod(s) of %d whole GPU(s) on single nodes: %d of %d fit in the free GPUs now",
			f.Room.Pods-f.Room.Hostable, f.Room.GPUs, f.Room.Hostable, f.Room.Pods)
	case f.Diagnosis != nil:
		return diagnosisRemedy(f.Diagnosis)
	}
	return ""
}

// diagnosisRemedy names what the node that came closest lacks, or the topology domain
// the gang needs.
func diagnosisRemedy(d *placement.Diagnosis) string {
	if d.Err != "" {
		return "fix the request: " + d.Err
	}
	if d.Topology != "" {
		return "a topology domain with room for the whole gang: " + d.Topology
	}
	m := d.NearMiss
	if m == nil || len(m.Rejections) == 0 {
		return ""
	}
	parts := make([]string, len(m.Rejections))
	for i, r := range m.Rejections {
		parts[i] = r.String()
	}
	return fmt.Sprintf("node %s, the closest, would take pod set %s pod %d without: %s", m.Node, d.PodSet, d.Pod, strings.Join(parts, "; "))
}
