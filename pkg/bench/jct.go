package bench

import (
	"fmt"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// The queueing policies of `gantry bench jct`. The oracles (sjf, srtf) read each job's
// run time from the trace before it runs; qssf and gantry-est learn run times online
// from the jobs that finished before a job arrives; fifo, gantry and gantry-lifo know
// no run time. The preemptive ones (srtf, gantry-est, gantry-lifo) assume a preempted
// job writes a checkpoint at its notice and resumes from it: it loses the grace period
// its preemptor waits, not its work.
const (
	// JCTFIFO: every ClusterQueue is StrictFIFO (its head blocks it), no reservations.
	JCTFIFO = "fifo"
	// JCTGantry: Gantry's default (as `gantry simulate --policy default`): BestEffortFIFO,
	// cohort borrowing, fair-share ordering, preemption where the queues allow it, and
	// reservations with backfill so large gangs are not starved. Every job has the same
	// priority, so no queue policy would let one preempt another.
	JCTGantry = "gantry"
	// JCTSJF: shortest job first, using the trace durations as known run times (as
	// priorities), BestEffortFIFO, no preemption or reservations.
	JCTSJF = "sjf"
	// JCTSRTF: shortest remaining time first with the trace durations, preemptive: every
	// queue may preempt lower-ranked running jobs in its own quota and, borrowing or
	// reclaiming, in the cohort. The engine's priorities are fixed when a job arrives,
	// so a job's rank is its whole run time, not what is left of it: a resumed job keeps
	// the rank of its full length (preemptive SJF, which equals SRTF for the jobs not
	// yet started and ranks resumed ones too low).
	JCTSRTF = "srtf"
	// JCTQSSF: Helios' quasi-shortest-service-first: priority by predicted GPU service
	// time (GPUs × run time), the run time predicted as the mean of the finished jobs of
	// the job's virtual cluster and GPU count (RuntimePredictor, PredictMean); no
	// preemption or reservations, as in Helios.
	JCTQSSF = "qssf"
	// JCTGantryEst: Gantry's default with learned run times: the predicted GPU service
	// time (PredictRecentMedian) ranks jobs in power-of-two bands (bandRank), within a
	// band Gantry's own order applies (fair share, then FIFO), and the queues preempt
	// lower bands as srtf's do.
	JCTGantryEst = "gantry-est"
	// JCTGantryLIFO: Gantry's default with no run time known and the newest job first:
	// a job's priority is its submission minute and the queues preempt lower
	// priorities as srtf's do (preemptive last-come-first-served). Like processor
	// sharing, its mean wait does not depend on how run times are distributed, so the
	// few week-long Philly jobs do not hold the queue; the price is that old jobs wait
	// while newer ones keep coming (see its p99).
	JCTGantryLIFO = "gantry-lifo"
)

// JCTPolicies lists the policies in the order they are reported.
func JCTPolicies() []string {
	return []string{JCTFIFO, JCTGantry, JCTSJF, JCTSRTF, JCTQSSF, JCTGantryEst, JCTGantryLIFO}
}

// jctPolicy is how a policy sets up the replay.
type jctPolicy struct {
	strategy   api.QueueingStrategy
	cfg        engine.Config
	preemption *api.Preemption // nil: the queues' own
	// oracle ranks jobs by their trace run times before the replay starts.
	oracle rankFunc
	// predict and online rank jobs by run times learned during the replay.
	predict PredictMethod
	online  rankFunc
	// byArrival ranks jobs by submission time, the newest first.
	byArrival bool
	// checkpoint makes every job save its progress at a preemption notice.
	checkpoint bool
}

// poolGPUs is the GPUs of every node pool.
func poolGPUs(objs *api.Objects) int {
	n := 0
	for _, p := range objs.NodePools {
		n += p.Count * p.GPUsPerNode
	}
	return n
}

// processCPU is the process's user+system CPU time so far (0 where unknown).
func processCPU() time.Duration {
	cpu, _ := processUsage()
	return cpu
}

// gantryConfig is Gantry's default engine configuration (engine.DefaultPolicy).
func gantryConfig() engine.Config { return engine.DefaultPolicy().Config }

func jctPolicyOf(name string) (jctPolicy, error) {
	switch name {
	case JCTFIFO:
		return jctPolicy{strategy: api.StrictFIFO}, nil
	case JCTGantry:
		return jctPolicy{strategy: api.BestEffortFIFO, cfg: gantryConfig()}, nil
	case JCTSJF:
		return jctPolicy{strategy: api.BestEffortFIFO, oracle: sjfRank}, nil
	case JCTSRTF:
		cfg := engine.Config{Preemption: true, Grace: gantryConfig().Grace}
		return jctPolicy{strategy: api.BestEffortFIFO, cfg: cfg, preemption: rankPreemption(), oracle: sjfRank, checkpoint: true}, nil
	case JCTQSSF:
		return jctPolicy{strategy: api.BestEffortFIFO, predict: PredictMean, online: qssfRank}, nil
	case JCTGantryEst:
		return jctPolicy{strategy: api.BestEffortFIFO, cfg: gantryConfig(), preemption: rankPreemption(), checkpoint: true,
			predict: PredictRecentMedian, online: bandRank}, nil
	case JCTGantryLIFO:
		return jctPolicy{strategy: api.BestEffortFIFO, cfg: gantryConfig(), preemption: rankPreemption(), checkpoint: true, byArrival: true}, nil
	}
	return jctPolicy{}, fmt.Errorf("bench jct: unknown policy %q: want one of %v", name, JCTPolicies())
}

// rankPreemption lets a job preempt the running jobs ranked below it (lower priority)
// anywhere in the cohort: in its own quota, reclaiming its quota, and borrowing.
func rankPreemption() *api.Preemption {
	return &api.Preemption{WithinClusterQueue: api.PreemptLowerPriority, ReclaimWithinCohort: api.PreemptLowerPriority,
		BorrowWithinCohort: api.BorrowWithinCohort{Policy: api.PreemptLowerPriority}}
}

// sjfRank ranks shorter jobs higher: minus the run time in seconds, bounded to int32.
func sjfRank(run time.Duration, _ int) int32 { return -clampInt32(int64(run / time.Second)) }

// JCTObjects returns a copy of objs set up for policy: queueing strategy and preemption
// per ClusterQueue, oracle priorities and checkpoints per workload. objs is unchanged.
// Online policies rank jobs during the replay (RunJCTWith).
func JCTObjects(objs *api.Objects, policy string) (*api.Objects, engine.Config, error) {
	p, err := jctPolicyOf(policy)
	if err != nil {
		return nil, engine.Config{}, err
	}
	return p.objects(objs), p.cfg, nil
}

func (p jctPolicy) objects(objs *api.Objects) *api.Objects {
	out := *objs
	out.ClusterQueues = slices.Clone(objs.ClusterQueues)
	out.Workloads = slices.Clone(objs.Workloads)
	for i := range out.ClusterQueues {
		out.ClusterQueues[i].QueueingStrategy = p.strategy
		if p.preemption != nil {
			out.ClusterQueues[i].Preemption = *p.preemption
		}
	}
	for i := range out.Workloads {
		w := &out.Workloads[i]
		switch {
		case p.oracle != nil:
			w.Priority = p.oracle(w.Timing.Duration, int(gpusOf(w)))
		case p.byArrival:
			w.Priority = clampInt32(int64(w.Timing.SubmitAt / time.Minute))
		}
		if p.checkpoint && w.Timing.CheckpointEvery == 0 {
			// Progress is saved at the notice; the period only has to be positive.
			w.Timing.CheckpointEvery = w.Timing.Duration + time.Hour
		}
	}
	return &out
}

// JCTOptions tune a replay.
type JCTOptions struct {
	Seed int64
	// Until stops the replay (0: when every job has finished).
	Until time.Duration
	// ETA measures explain's ETA at every job's submission against its real start.
	ETA bool
	// Observers see the run too (a progress bar, a report).
	Observers []sim.Observer
}

// JCTResult is one policy's replay.
type JCTResult struct {
	Policy   string `json:"policy"`
	Jobs     int    `json:"jobs"`
	Finished int    `json:"finished"`
	// StillPending counts jobs never started by the end (left out of Wait).
	StillPending int `json:"stillPending"`
	Preempted    int `json:"preempted"`
	// Wait is each started job's time in its queue (submission to first start plus every
	// requeue to the next start); JCT is finish − submission of finished jobs.
	Wait report.Distribution `json:"wait"`
	JCT  report.Distribution `json:"jct"`
	// ETA is the ETA accuracy per kind of runtime knowledge (JCTOptions.ETA).
	ETA []ETAAccuracy `json:"eta,omitempty"`
	// Prediction is how well the run times that ranked the jobs were predicted (the
	// policies that learn them).
	Prediction *PredictionAccuracy `json:"prediction,omitempty"`
	// End is the simulated time the replay stopped; CPU the process CPU time it took.
	End    sim.Seconds   `json:"end"`
	CPU    time.Duration `json:"cpuNanoseconds"`
	Report report.Report `json:"-"`
}

// RunJCT replays objs under one policy until every job has finished (or until, when
// positive) and summarises job completion time and queueing delay. Extra observers (a
// progress bar) see the run too.
func RunJCT(objs *api.Objects, policy string, seed int64, until time.Duration, extra ...sim.Observer) (JCTResult, error) {
	return RunJCTWith(objs, policy, JCTOptions{Seed: seed, Until: until, Observers: extra})
}

// RunJCTWith replays objs under one policy with the given options.
func RunJCTWith(objs *api.Objects, policy string, o JCTOptions) (JCTResult, error) {
	p, err := jctPolicyOf(policy)
	if err != nil {
		return JCTResult{}, err
	}
	return runJCTPolicy(objs, policy, p, o)
}

// runJCTPolicy replays objs under p, reported as policy.
func runJCTPolicy(objs *api.Objects, policy string, p jctPolicy, o JCTOptions) (JCTResult, error) {
	cpu0 := processCPU()
	pobjs := p.objects(objs)
	kpi := report.NewKPICollector(report.KPIOptions{CapacityEvery: time.Hour})
	observers := []sim.Observer{kpi}
	var ranker *arrivalRanker
	if p.online != nil {
		ranker = newArrivalRanker(pobjs, NewRuntimePredictor(p.predict), p.online)
		observers = append(observers, ranker)
	}
	var probe *etaProbe
	if o.ETA {
		probe = newETAProbe(pobjs, ranker, poolGPUs(pobjs), p.strategy == api.StrictFIFO)
		observers = append(observers, probe)
	}
	s, err := sim.New(pobjs, sim.Options{
		Until:     o.Until,
		Policy:    engine.Policy{Config: p.cfg, Seed: o.Seed},
		Observers: append(observers, o.Observers...),
	})
	if err != nil {
		return JCTResult{}, err
	}
	if ranker != nil {
		ranker.sim = s
		ranker.rankNext(-1)
	}
	if probe != nil {
		probe.sim = s
	}
	if err := s.Run(); err != nil {
		return JCTResult{}, fmt.Errorf("bench jct: policy %s: %w", policy, err)
	}
	if ranker != nil && ranker.err != nil {
		return JCTResult{}, ranker.err
	}
	r := kpi.Report(sim.Seconds(s.Now()))
	res := JCTResult{
		Policy: policy, Jobs: len(objs.Workloads), Finished: r.Overall.Finished, StillPending: r.Overall.StillPending,
		Preempted: r.Overall.Preempted, Wait: r.Overall.Wait, JCT: r.Overall.JCT,
		End: sim.Seconds(s.Now()), Report: r,
	}
	if probe != nil {
		res.ETA = probe.accuracy()
	}
	if ranker != nil {
		acc := ranker.accuracy()
		res.Prediction = &acc
	}
	res.CPU = processCPU() - cpu0
	return res, nil
}
