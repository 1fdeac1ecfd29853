package bench

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// ScaleResult is one `gantry bench scale` run: what it cost on this machine and what the
// simulation produced.
type ScaleResult struct {
	// The spec (Jobs below is the number generated) and the fleet's GPUs.
	Nodes   int         `json:"nodes"`
	GPUs    int         `json:"gpus"`
	Queues  int         `json:"queues"`
	Cohorts int         `json:"cohorts"`
	Seed    int64       `json:"seed"`
	Spread  sim.Seconds `json:"spread"`
	// Generate is the wall time of Generate.
	Generate time.Duration `json:"generateNs"`
	// SimulateWall and SimulateCPU cover building the simulator (engine.Build included),
	// running it to completion and summarising its KPIs. SimulateCPU is the process's
	// user+system time over that span (every thread, the garbage collector's included);
	// zero where the platform has no getrusage.
	SimulateWall time.Duration `json:"simulateWallNs"`
	SimulateCPU  time.Duration `json:"simulateCpuNs"`
	// PeakRSS is the process's peak resident set in bytes since it started (getrusage
	// maxrss), so earlier work in the same process counts too; zero where unknown.
	PeakRSS int64 `json:"peakRssBytes"`
	// Jobs were submitted, Finished ran to completion, StillPending were never placed.
	Jobs         int `json:"jobs"`
	Finished     int `json:"finished"`
	StillPending int `json:"stillPending"`
	// Cycles are the scheduling cycles run; Considered the pending workloads handed to
	// them in all (what parking and equivalence classes keep down).
	Cycles     int64 `json:"cycles"`
	Considered int64 `json:"considered"`
	// Makespan is the simulated time the last event happened at (jobs are submitted from
	// t=0, so it is the makespan).
	Makespan sim.Seconds `json:"makespan"`
	// MeanWait and P95Wait are over placed jobs: submission to first placement plus every
	// requeue to the next placement.
	MeanWait sim.Seconds `json:"meanWait"`
	P95Wait  sim.Seconds `json:"p95Wait"`
}

// RunScale generates spec's fleet and simulates it to completion with the default policy
// (engine.DefaultPolicy, as `gantry simulate` runs it; spec.HeadOrder its order), measuring time and memory. Extra
// observers (a progress line) see the run too; their cost is measured with it.
func RunScale(spec ScaleSpec, extra ...sim.Observer) (ScaleResult, error) {
	start := time.Now()
	objs, err := Generate(spec)
	if err != nil {
		return ScaleResult{}, err
	}
	res := ScaleResult{Nodes: spec.Nodes, GPUs: spec.Nodes * scaleGPUsPerNode, Queues: spec.Queues, Cohorts: spec.Cohorts, Seed: spec.Seed, Spread: sim.Seconds(spec.Spread),
		Generate: time.Since(start), Jobs: len(objs.Workloads)}

	cpu0, _ := processUsage()
	start = time.Now()
	kpis := report.NewKPICollector(report.KPIOptions{Shapes: report.ShapesOf(objs.Workloads)})
	pol := engine.DefaultPolicy()
	pol.HeadOrder = spec.HeadOrder
	s, err := sim.New(objs, sim.Options{Policy: pol, Observers: append([]sim.Observer{kpis}, extra...)})
	if err != nil {
		return ScaleResult{}, fmt.Errorf("bench scale: %w", err)
	}
	if err := s.Run(); err != nil {
		return ScaleResult{}, fmt.Errorf("bench scale: %w", err)
	}
	rep := kpis.Report(sim.Seconds(s.Now()))
	res.SimulateWall = time.Since(start)
	cpu1, rss := processUsage()
	res.SimulateCPU, res.PeakRSS = cpu1-cpu0, rss

	res.Finished, res.StillPending = rep.Overall.Finished, rep.Overall.StillPending
	res.Cycles, res.Considered = s.SchedulerStats()
	res.Makespan = sim.Seconds(s.Now())
	res.MeanWait, res.P95Wait = rep.Overall.Wait.Mean, rep.Overall.Wait.P95
	return res, nil
}
