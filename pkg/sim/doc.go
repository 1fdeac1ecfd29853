// Package sim is Gantry's discrete-event simulator: it runs the production engine
// (pkg/engine) over a modelled cluster, driven by workload timing (submit-at, duration,
// checkpoint-every) and cluster events (node add/remove/fail/recover, spot interruptions
// with notice, MIG re-layout, quota changes), and writes a deterministic event log.
//
// This package is the event loop and nothing else: sim.go, cycle.go, queue.go,
// workload.go, committer.go, handle.go, live.go, requeue.go (the loop, the model of
// running workloads and their progress/lost work, parking), events.go and
// clusterevents.go (the event log and cluster events), sample.go, sample_delta.go,
// changes.go and delta.go (state samples for observers: whole states, or what changed
// since the last sample), livestart.go (the pods a cluster dump says run already,
// started at t=0 where they are), provision*.go (Kueue's ProvisioningRequest admission
// check and the cluster-autoscaler behind it), explain*.go, neverfits.go (workloads no placement could ever
// start, marked NeverFits) and view.go (the operator's view, pkg/view, at the current
// time: what `gantry get`, `top` and the dashboard show). What builds on the loop lives in subpackages that import
// it, never the other way: pkg/sim/trace (trace importers), pkg/sim/report (KPIs and the
// text/HTML report, as a DeltaObserver of EventRecord and StateDelta), and pkg/bench (the
// experiments).
//
// Everything is deterministic for a seed: time advances only through the event queue
// (ordered by time, then insertion sequence) and randomness comes from one seeded
// *rand.Rand handed to the engine.
package sim
