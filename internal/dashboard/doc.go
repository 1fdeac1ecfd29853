// Package dashboard is Gantry's web dashboard: server-rendered pages over a view.Snapshot
// (cohorts and ClusterQueues with their usage, pending workloads in queue order with why
// they wait and when they should start, a node × GPU map of every device and its holder,
// and charts over time), plus /api/snapshot (the Snapshot as JSON) and /healthz.
//
// It owns the HTTP handler, its templates and style sheet (embedded in the binary: no
// CDN, no build step, no request leaves the server) and the two Sources it renders:
// Replay, a finished simulation shown at any simulated time with the simulation
// report's charts, and Live, a cluster read on each request with a bounded history of
// samples for its charts. Where a snapshot comes from (the simulator's View, the
// controller's ReadView) is the caller's: this package never imports pkg/controller and
// does not run a simulation itself. Every route is a read-only GET.
package dashboard
