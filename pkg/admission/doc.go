// Package admission owns Gantry's queue admission layer, with Kueue's semantics: the
// cohort tree and its quota math (nominal quota, borrowing and lending limits, usage per
// flavor and resource), LocalQueue → ClusterQueue queueing (StrictFIFO, BestEffortFIFO,
// stop policies, namespace selectors, admission fair sharing across LocalQueues),
// flavor assignment with flavor fungibility, quota preemption (within the ClusterQueue,
// reclaim and borrow within the cohort, fair-sharing strategies) and dominant resource
// share.
//
// Everything here is a pure function of values: no clocks (times are passed in), no
// randomness, no I/O. Quota decisions are candidates only: the engine asks placement to
// confirm a candidate and only then calls Admit (see docs/admission.md).
//
// Main types: Quota (the cohort tree with usage; cheap Clone for what-ifs), Assignment
// (the outcome of Assign: a flavor per pod set and resource, an ordered Mode and the
// reason for every flavor tried), Victim (FindVictims), Resolver (LocalQueue →
// ClusterQueue, namespace selectors, stop policies: the queue rules the engine's
// scheduler enforces), LocalQueueUsage (admission fair sharing across LocalQueues, which
// the scheduler orders by), and Queues/Manager (a Kueue-style queue manager used by this
// package's tests; its ordering duplicates the scheduler's, see docs/admission.md).
package admission
