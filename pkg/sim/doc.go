// Package sim is Gantry's discrete-event simulator: it runs the production engine
// (pkg/engine) over a modelled cluster, driven by workload timing (submit-at, duration,
// checkpoint-every) and cluster events (node add/remove/fail/recover, spot interruptions
// with notice, MIG re-layout, quota changes), and writes a deterministic event log.
//
// The simulator core (this file's siblings: sim.go, queue.go, model.go, committer.go,
// events.go, clusterevents.go) owns the event loop, the model of running workloads and
// their progress/lost work, and the event log. Trace importers, KPIs, the HTML report and
// the bench experiments (trace*.go, kpi*.go, report*.go, bench*.go) build on the
// EventRecord and Observer types defined in events.go.
//
// Everything is deterministic for a seed: time advances only through the event queue
// (ordered by time, then insertion sequence) and randomness comes from one seeded
// *rand.Rand handed to the engine.
package sim
