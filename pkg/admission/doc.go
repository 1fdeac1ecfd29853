// Package admission is Gantry's quota layer, with Kueue's semantics: the cohort tree and
// its quota math (nominal quota, borrowing and lending limits, usage per flavor and
// resource), flavor assignment with flavor fungibility, quota preemption (within the
// ClusterQueue, reclaim and borrow within the cohort, fair-sharing strategies) and
// dominant resource share; and the queue rules asked before any quota is looked at
// (LocalQueue → ClusterQueue, namespace selectors, stop policies). Queueing itself (the
// order workloads are tried in, StrictFIFO and BestEffortFIFO, parking and waking) is
// the engine's Scheduler (pkg/engine), which uses this package.
//
// Everything here is a pure function of values: no clocks (times are passed in), no
// randomness, no I/O. Quota decisions are candidates only: the engine asks placement to
// confirm a candidate and only then calls Admit (see docs/admission.md).
//
// Main types: Quota (the cohort tree with usage; cheap Clone for what-ifs), Assignment
// (the outcome of Assign: a flavor per pod set and resource, an ordered Mode and the
// reason for every flavor tried), Victim (FindVictims), Resolver (LocalQueue →
// ClusterQueue, namespace selectors, stop policies) and LocalQueueUsage (admission fair
// sharing: each LocalQueue's decayed usage, by which the scheduler orders the workloads
// of a ClusterQueue that enables it). Partial admission (partial*.go, Kueue's): a workload
// whose pod sets state a minimum count and that cannot be admitted whole is admitted with
// the largest counts that fit (SearchReduced, AssignPartial; PodSetAssignment.FullCount).
package admission
