// Package plan owns the Plan value — what one scheduling cycle decided: admissions with
// their flavor assignment, bindings (pod → node → device IDs), preemption notices with a
// grace period, evictions, reservations with an ETA, and rejections with reasons — and
// the Committer interface that applies a plan to a cluster (the simulator's model or the
// Kubernetes API server), re-checking it against current state so that a device is never
// bound twice.
//
// It also owns the workload lifecycle state machine shared by the simulator and the
// controller (lifecycle.go). Committers re-check against their own state (the
// simulator: admission.Quota.Admit and cluster.Snapshot.Apply, which refuses a device in
// use; the controller: Workload status writes with optimistic concurrency).
// The package is pure data and validation: no I/O, no clocks.
package plan
