package placement

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// This file holds the values of placement-time preemption: what the engine hands in
// (running gangs, budgets, history) and what it gets back (victims, notices, reasons).
// The search itself is in preempt_search.go; ordering and eligibility in
// preempt_order.go.

// MilliGPUSeconds is GPU work in thousandths of a GPU times seconds: the unit of the
// work a preemption throws away (an 8-GPU gang 10 minutes past its last checkpoint
// loses 8000 × 600 milli-GPU-seconds).
type MilliGPUSeconds int64

// Running is a running workload as preemption and reservations see it. It is a value
// the engine builds from its own state each cycle.
type Running struct {
	// The fields every cycle reads for every running workload (the order by end,
	// minimum-runtime protection) come first, within one cache line: ten thousand
	// running workloads are read each cycle.
	ID api.WorkloadID
	// ExpectedEnd is when the workload will have finished at the latest (start plus
	// max runtime or known duration); zero means unbounded. Reservations use it.
	ExpectedEnd time.Time
	GPUMilli    resources.MilliGPU // GPU in use by the whole gang
	MinRuntime  time.Duration      // not preempted before running this long
	// GracePeriod overrides the request's notice period for this workload (time it
	// needs to write a checkpoint); zero uses the request's.
	GracePeriod time.Duration
	StartedAt   time.Time
	Priority    int32
	Preemptible bool   // false: never chosen as a victim
	Queue       string // ClusterQueue whose disruption budget a preemption counts against
	// CapacityType is api.CapacitySpot when the gang runs on spot nodes (cheaper to
	// disturb: the capacity may vanish anyway), else on-demand or reserved.
	CapacityType string
	Created      time.Time // orders equal priorities under LowerOrNewerEqualPriority
	// LastCheckpoint is when the workload last saved its progress; zero means never.
	LastCheckpoint time.Time
	// Pods are the gang's bound pods; the overlay knows their nodes and devices.
	Pods []cluster.PodRef
}

// PreemptionRecord is one past preemption, for disruption budgets.
type PreemptionRecord struct {
	Workload api.WorkloadID
	Queue    string
	At       time.Time
	GPUMilli resources.MilliGPU
}

// Preemptor is the workload that wants to run.
type Preemptor struct {
	ID       api.WorkloadID
	Priority int32
	Created  time.Time
}

func (p Preemptor) priorityAge() api.PriorityAge {
	return api.PriorityAge{Priority: p.Priority, Created: p.Created}
}

func (r Running) priorityAge() api.PriorityAge {
	return api.PriorityAge{Priority: r.Priority, Created: r.Created}
}

// defaultPolicy is what an empty PreemptionRequest.Policy asks for. It differs from
// api.PreemptionPolicy's empty value (Never): SelectVictims has always read an unset
// Policy as LowerPriority, and its callers and tests rely on that; the engine passes the
// ClusterQueue's loaded policy, which is never empty.
const defaultPolicy = api.PreemptLowerPriority

// PreemptionRequest is everything victim selection reads besides the overlay.
type PreemptionRequest struct {
	Preemptor Preemptor
	// Policy says which priorities may be preempted (api.PreemptionPolicy.Allows):
	// LowerPriority (also when empty, see defaultPolicy), LowerOrNewerEqualPriority,
	// Any, or Never.
	Policy  api.PreemptionPolicy
	Running []Running
	// Budgets maps a ClusterQueue name to its disruption budget; queues not listed
	// have no budget.
	Budgets map[string]api.DisruptionBudget
	History []PreemptionRecord
	Now     time.Time
	// GracePeriod is the notice a victim gets before eviction, to checkpoint.
	GracePeriod time.Duration
}

// SkipCode is a stable reason code for a running workload not chosen as a victim.
type SkipCode string

const (
	SkipNotPreemptible SkipCode = "NotPreemptible"
	SkipPriority       SkipCode = "Priority"   // policy does not allow preempting it
	SkipMinRuntime     SkipCode = "MinRuntime" // has not yet run its minimum runtime
	SkipBudget         SkipCode = "DisruptionBudget"
	SkipNoHelp         SkipCode = "DoesNotHelp" // freeing it does not help the gang fit
	SkipNotNeeded      SkipCode = "NotNeeded"   // the gang fits without it
	SkipSelf           SkipCode = "Self"
)

// Skipped explains why one running workload was not chosen.
type Skipped struct {
	Workload api.WorkloadID
	Code     SkipCode
	Detail   string
}

// Victim is a whole gang chosen for preemption.
type Victim struct {
	Workload api.WorkloadID
	Queue    string
	Priority int32
	GPUMilli resources.MilliGPU
	LostWork MilliGPUSeconds
	Nodes    []string // nodes its pods free, sorted
}

// Notice tells a victim to checkpoint and leave: evicted at EvictAt unless gone.
type Notice struct {
	Workload api.WorkloadID
	NoticeAt time.Time
	EvictAt  time.Time
	Reason   string
}

// PreemptOutcome says what victim selection concluded.
type PreemptOutcome string

const (
	// PreemptFound: victims chosen; removing them lets the gang fit.
	PreemptFound PreemptOutcome = "Found"
	// PreemptNotNeeded: the gang already fits; nothing to preempt.
	PreemptNotNeeded PreemptOutcome = "NotNeeded"
	// PreemptNoCandidates: nothing may be preempted (all skipped).
	PreemptNoCandidates PreemptOutcome = "NoCandidates"
	// PreemptStillNoFit: even removing every eligible candidate the gang does not fit.
	PreemptStillNoFit PreemptOutcome = "StillNoFit"
	// PreemptPolicyNever: the policy forbids preemption.
	PreemptPolicyNever PreemptOutcome = "PolicyNever"
)

// PreemptionResult is a preemption plan, not an action: nothing is evicted and the
// overlay is left as it was.
type PreemptionResult struct {
	Preemptor api.WorkloadID
	Outcome   PreemptOutcome
	Victims   []Victim // in the order they were chosen
	Notices   []Notice // one per victim
	// Placement is the gang's placement once the victims are gone (valid when
	// Outcome is PreemptFound or PreemptNotNeeded).
	Placement *Placement
	// Pods is the same placement as bound pods: pod → node → devices.
	Pods    []cluster.BoundPod
	Skipped []Skipped // every running workload not chosen, with why
	// Totals over the victims.
	FreedGPUMilli resources.MilliGPU
	LostWork      MilliGPUSeconds
}
