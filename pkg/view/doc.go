// Package view is what an operator sees of a Gantry scheduler at one moment: cohorts and
// ClusterQueues with their usage, the workloads with where they run or why they wait,
// and every node's GPUs with the devices on them and who holds them.
//
// It owns the Snapshot value and the few builders both drivers share: plain typed data,
// no clients, no clock. Two drivers fill it (the simulator at a simulated time,
// sim.Simulator.View, and a live cluster read from the API server,
// controller.ReadView) and two front ends render it (the CLI's get, top and explain,
// and the web dashboard), so a view over files and a view over a cluster print the
// same way. The builders (QueueOf, CohortsOf, NodesOf, GPUEquivalent, WorkloadSize)
// take the engine's own quota state, cluster snapshot and workload model, which both
// drivers have, so quota, usage, fair share and devices are valued by one code path.
package view
