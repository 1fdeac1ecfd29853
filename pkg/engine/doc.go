// Package engine owns one scheduling cycle: from an immutable cluster snapshot, a what-if
// copy of the quota state and the pending and running workloads, it orders the queue
// heads (priority, fair share, FIFO), asks admission for a flavor assignment, asks
// placement to place the whole gang under that assignment (preempting or reserving when
// the configuration allows), and returns a plan.Plan. It changes nothing outside the
// cycle's own copies: committing the plan is a plan.Committer's job.
//
// The engine talks to admission and placement through two small consumer-side
// interfaces (Quota and Placer, in interfaces.go) so the cycle can be tested with fakes
// and the adapters over the real packages live in adapters.go. Time and randomness are
// injected through Input; the same Input gives the same Plan.
//
// Scheduler (scheduler.go, build.go) is the state both drivers keep between cycles: each
// workload's queue and where it stands, parked workloads indexed by what could wake them
// (entry sets, entryset.go), reservations, notices and preemption history; it hands a
// cycle only the workloads whose answer may have changed. Three kinds come in through
// gates instead of as plain pending workloads: class heads a quota wake found
// (quota_seekers.go), visited only if the cycle's quota is not certainly short for
// them at their turn; workloads refused behind reservations, kept by class and
// fetched one at a time (reserve_seekers.go), visited only while a reservation slot is
// left or when the GPUs the holds leave could host them (reserve_held.go); and parked
// workloads the cycle's own admissions may answer otherwise (stirred.go), visited only
// when the cycle admitted something in their cohort tree before their turn.
//
// Under Kueue's cycle (HeadOrderKueue) a cycle also holds quota as Kueue's does for
// preemptors and for queue heads that cannot reclaim (holds.go); the holds only veto,
// on the cycle's copy.
package engine
