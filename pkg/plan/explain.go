package plan

import (
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Explain renders the rejection for people, one fact a line: the engine's facts first,
// then admission's flavor assignment, then placement's failure and the flavors tried
// after it. It is the only place a rejection becomes text; the Workload status message,
// the simulator's event log and `gantry explain` all show these lines.
func (r Rejection) Explain() []string { return r.explain(0) }

// Headline is Explain's first line ("" when there is none), without rendering the rest:
// the simulator's event log keeps only that line, for thousands of rejections.
func (r Rejection) Headline() string {
	if lines := r.explain(1); len(lines) > 0 {
		return lines[0]
	}
	return ""
}

// explain renders the lines, stopping once it has limit of them (0: all).
func (r Rejection) explain(limit int) []string {
	var out []string
	full := func() bool { return limit > 0 && len(out) >= limit }
	if r.Reason == ReasonBlockedByHead { // no evidence: the head is in r.ClusterQueue
		out = append(out, "StrictFIFO: an earlier workload of ClusterQueue "+r.ClusterQueue+" is not admitted yet")
	}
	e := r.Evidence
	if e == nil {
		return out
	}
	if e.Message != "" {
		out = append(out, e.Message)
	}
	if q := e.Unresolved; q != nil {
		out = append(out, fmt.Sprintf("LocalQueue %q in namespace %q does not resolve to a ClusterQueue", q.Name, q.Namespace))
	}
	if e.MaxAttempts > 0 {
		out = append(out, fmt.Sprintf("more than %d workloads pending; tried in a later cycle", e.MaxAttempts))
	}
	if e.PreemptedBy != "" {
		out = append(out, "preempted by "+string(e.PreemptedBy)+", which still waits for its victims")
	}
	if e.Victim != nil {
		out = append(out, e.Victim.String())
	}
	if len(e.Victims) > 0 {
		out = append(out, "victims: "+joinIDs(e.Victims))
	}
	if len(e.Holding) > 0 {
		out = append(out, "holds "+flavorAmounts(e.Holding)+" of ClusterQueue "+r.ClusterQueue+
			" this cycle: it needs preemption, has no victims, and its ClusterQueue cannot always reclaim what it lends")
	}
	if len(e.HeldFor) > 0 {
		out = append(out, "the quota it needs is held this cycle for "+joinIDs(e.HeldFor)+
			" (preemptors' victims counted as gone); tried again next cycle")
	}
	if full() {
		return out[:limit]
	}
	if e.Quota != nil {
		out = appendQuota(out, e.Quota, limit)
	}
	if full() {
		return out[:limit]
	}
	if e.Search != nil {
		out = append(out, e.Search.Message)
	}
	if full() {
		return out[:limit]
	}
	if f := e.Place; f != nil {
		switch {
		case e.Without != nil:
			out = append(out, "quota fits after preempting "+joinIDs(e.Without)+", the nodes do not: "+string(f.Code))
		case f.Code != r.Reason:
			out = append(out, "placement: "+string(f.Code))
		}
		out = f.appendLines(out)
	}
	if full() {
		return out[:limit]
	}
	for _, fb := range e.Fallbacks {
		out = append(out, fb.String())
	}
	if e.Backoff != nil {
		out = append(out, e.Backoff.String())
	}
	if full() {
		return out[:limit]
	}
	return out
}

// flavorAmounts renders amounts as "cpu@default=2, nvidia.com/gpu@h100=8".
func flavorAmounts(as []admission.FlavorAmount) string {
	parts := make([]string, 0, len(as))
	for _, a := range as {
		parts = append(parts, string(a.Resource)+"@"+a.Flavor+"="+resources.Format(a.Resource, a.Amount))
	}
	return strings.Join(parts, ", ")
}

// appendQuota renders admission's assignment: its message, then every flavor tried
// (stopping once out holds limit lines; 0: no limit).
func appendQuota(out []string, a *admission.Assignment, limit int) []string {
	if why := a.Why(); why != "" {
		out = append(out, why)
	}
	if limit > 0 && len(out) >= limit {
		return out
	}
	for _, ps := range a.PodSets {
		for _, t := range ps.Tried {
			line := fmt.Sprintf("pod set %s, flavor %s: %s", ps.Name, t.Flavor, t.Mode)
			if t.Flavor == "" { // refused before any flavor was tried
				line = fmt.Sprintf("pod set %s: %s", ps.Name, t.Mode)
			}
			if t.Code != admission.ReasonNone {
				line += " (" + string(t.Code) + ")"
			}
			for i, why := range t.Reasons {
				sep := "; "
				if i == 0 {
					sep = ": "
				}
				line += sep + why.String()
			}
			out = append(out, line)
		}
	}
	return out
}

// Lines renders what backs the failure, one fact a line (the code is the caller's).
func (f *PlaceFailure) Lines() []string { return f.appendLines(nil) }

func (f *PlaceFailure) appendLines(out []string) []string {
	if f.Diagnosis != nil {
		out = append(out, f.Diagnosis.String())
	}
	if f.Holds > 0 {
		out = append(out, fmt.Sprintf("the gang does not fit around the GPUs %d reservation(s) ahead of it hold", f.Holds))
	}
	if f.NeedGPU > 0 {
		out = append(out, fmt.Sprintf("the gang needs %d milli-GPU at once; the whole cluster has %d free", f.NeedGPU, f.FreeGPU))
	}
	if r := f.Room; r != nil {
		out = append(out, fmt.Sprintf("the gang needs %d pod(s) of %d whole GPU(s) at once; the free GPUs, node by node, could host %d",
			r.Pods, r.GPUs, r.Hostable))
	}
	if n := f.Reserved; n != nil {
		out = append(out, fmt.Sprintf("node %s is reserved from %s and this workload's runtime (%s) does not end before",
			n.Node, n.In, runtimeText(n.Runtime)))
	}
	if f.Message != "" {
		out = append(out, f.Message)
	}
	return out
}

func (v UnusableVictim) String() string {
	switch v.Why {
	case VictimPreemptedThis:
		return "victim " + string(v.Workload) + " preempted this workload before"
	case VictimPreemptedBefore:
		return "victim " + string(v.Workload) + " was preempted by this workload before and started again"
	case VictimLeaving:
		return "victim " + string(v.Workload) + " is already leaving"
	}
	return fmt.Sprintf("victim %s: VictimState(%d)", v.Workload, v.Why)
}

func (b Backoff) String() string {
	if b.Limit > 0 {
		return fmt.Sprintf("evicted by %d failures, more than the requeue limit %d; not tried again until the workload changes", b.Failures, b.Limit)
	}
	return fmt.Sprintf("evicted by failure %d at %s; retried from %s", b.Failures,
		b.EvictedAt.UTC().Format(time.RFC3339), b.RetryAt.UTC().Format(time.RFC3339))
}

func (f Fallback) String() string {
	if a := f.Quota; a != nil {
		return fmt.Sprintf("fallback without flavor %s: quota %s (%s) %s", strings.Join(f.Without, ","), a.Mode, a.Code, a.Why())
	}
	var code Reason
	var lines []string
	if f.Place != nil {
		code, lines = f.Place.Code, f.Place.Lines()
	}
	return "fallback to flavor " + strings.Join(f.Flavors, ",") + ": " + string(code) + ": " + strings.Join(lines, "; ")
}

func joinIDs(ids []api.WorkloadID) string {
	s := make([]string, len(ids))
	for i, id := range ids {
		s[i] = string(id)
	}
	return strings.Join(s, ",")
}

func runtimeText(d time.Duration) string {
	if d > 0 {
		return d.String()
	}
	return "unknown"
}
