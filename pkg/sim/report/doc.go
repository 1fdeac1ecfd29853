// Package report measures and presents a simulation: KPICollector is a sim.Observer that
// turns the event log and state samples into a typed Report (waits, JCT, preemptions,
// lost work, GPU allocation, stranded capacity, FGD fragmentation, quota use), which
// WriteText prints as tables and WriteHTML renders as one self-contained page of inline
// SVG charts. It reads pkg/sim's EventRecord and StateDelta (or ClusterState); pkg/sim
// never imports it.
package report
