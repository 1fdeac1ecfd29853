// Package trace turns public cluster traces into Gantry objects for the simulator: the
// Alibaba openb node and pod lists, Microsoft's Philly jobs and virtual clusters, and a
// generic workload CSV with named columns. Each importer reports bad values with file,
// line and column (TraceErrors) and stamps workloads relative to sim.Epoch, so a trace
// replays the same way every time. It depends on pkg/sim only for that epoch.
package trace
