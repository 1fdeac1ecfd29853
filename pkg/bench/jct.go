package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// The queueing policies of `gantry bench jct`.
const (
	// JCTFIFO: every ClusterQueue is StrictFIFO (its head blocks it), no reservations.
	JCTFIFO = "fifo"
	// JCTGantry: Gantry's default (as `gantry simulate --policy default`): BestEffortFIFO,
	// cohort borrowing, fair-share ordering, preemption where the queues allow it, and
	// reservations with backfill so large gangs are not starved.
	JCTGantry = "gantry"
	// JCTSJF: shortest job first, using the trace durations as known run times (as
	// priorities), BestEffortFIFO, no reservations.
	JCTSJF = "sjf"
)

// JCTPolicies lists the policies in the order they are reported.
func JCTPolicies() []string { return []string{JCTFIFO, JCTGantry, JCTSJF} }

// JCTResult is one policy's replay.
type JCTResult struct {
	Policy   string      `json:"policy"`
	Jobs     int         `json:"jobs"`
	Finished int         `json:"finished"`
	AvgJCT   sim.Seconds `json:"avgJct"`
	AvgWait  sim.Seconds `json:"avgWait"`
	P95Wait  sim.Seconds `json:"p95Wait"`
	// End is the simulated time the replay stopped.
	End    sim.Seconds   `json:"end"`
	Report report.Report `json:"-"`
}

// JCTObjects returns a copy of objs set up for policy: queueing strategy per
// ClusterQueue and, for sjf, priorities from the workloads' durations. objs is unchanged.
func JCTObjects(objs *api.Objects, policy string) (*api.Objects, engine.Config, error) {
	out := *objs
	out.ClusterQueues = slices.Clone(objs.ClusterQueues)
	out.Workloads = slices.Clone(objs.Workloads)
	var cfg engine.Config
	strategy := api.BestEffortFIFO
	switch policy {
	case JCTFIFO:
		strategy = api.StrictFIFO
	case JCTGantry:
		cfg.Preemption, cfg.Reservations, cfg.Grace = true, true, 2*time.Minute
	case JCTSJF:
		for i := range out.Workloads {
			out.Workloads[i].Priority = sjfPriority(out.Workloads[i].Timing.Duration)
		}
	default:
		return nil, cfg, fmt.Errorf("bench jct: unknown policy %q: want one of %v", policy, JCTPolicies())
	}
	for i := range out.ClusterQueues {
		out.ClusterQueues[i].QueueingStrategy = strategy
	}
	return &out, cfg, nil
}

// sjfPriority ranks shorter jobs higher: minus the run time in seconds, bounded to int32.
func sjfPriority(d time.Duration) int32 {
	s := int64(d / time.Second)
	return int32(-min(s, math.MaxInt32))
}

// RunJCT replays objs under one policy until every job has finished (or until, when
// positive) and summarises job completion time and queueing delay. Extra observers (a
// progress bar) see the run too.
func RunJCT(objs *api.Objects, policy string, seed int64, until time.Duration, extra ...sim.Observer) (JCTResult, error) {
	pobjs, cfg, err := JCTObjects(objs, policy)
	if err != nil {
		return JCTResult{}, err
	}
	kpi := report.NewKPICollector(report.KPIOptions{CapacityEvery: time.Hour})
	s, err := sim.New(pobjs, sim.Options{
		Until:     until,
		Policy:    engine.Policy{Config: cfg, Seed: seed},
		Observers: append([]sim.Observer{kpi}, extra...),
	})
	if err != nil {
		return JCTResult{}, err
	}
	if err := s.Run(); err != nil {
		return JCTResult{}, fmt.Errorf("bench jct: policy %s: %w", policy, err)
	}
	r := kpi.Report(sim.Seconds(s.Now()))
	return JCTResult{
		Policy: policy, Jobs: len(objs.Workloads), Finished: r.Overall.Finished,
		AvgJCT: r.Overall.JCT.Mean, AvgWait: r.Overall.Wait.Mean, P95Wait: r.Overall.Wait.P95,
		End: sim.Seconds(s.Now()), Report: r,
	}, nil
}
