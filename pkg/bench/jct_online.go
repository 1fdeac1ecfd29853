package bench

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// jobFacts are what the online policies read of a job: its queue, GPU count and true
// run time (which only a finished job reveals to them).
type jobFacts struct {
	queue string
	gpus  int
	run   time.Duration
}

// factsOf indexes the workloads by ID.
func factsOf(objs *api.Objects) map[string]jobFacts {
	out := make(map[string]jobFacts, len(objs.Workloads))
	for i := range objs.Workloads {
		w := &objs.Workloads[i]
		out[string(w.ID())] = jobFacts{queue: w.Queue, gpus: int(gpusOf(w)), run: w.Timing.Duration}
	}
	return out
}

// gpusOf is a workload's whole GPU count (all pods of all pod sets).
func gpusOf(w *api.Workload) resources.Amount {
	var n resources.Amount
	for _, ps := range w.PodSets {
		n += ps.Requests[resources.NvidiaGPU] * resources.Amount(ps.Count)
	}
	return n
}

// learner feeds a RuntimePredictor the run time of every job that finishes.
type learner struct {
	pred  *RuntimePredictor
	facts map[string]jobFacts
	// learned counts the runs observed: a prediction made at the same count is still
	// current.
	learned int
}

func (l *learner) observe(r sim.EventRecord) {
	if f, ok := l.facts[r.Workload]; ok && r.Event == sim.EvFinished {
		l.pred.Observe(f.queue, f.gpus, f.run)
		l.learned++
	}
}

// rankFunc turns a predicted run time and a GPU count into a priority.
type rankFunc func(predicted time.Duration, gpus int) int32

// qssfRank is Helios' QSSF: the shorter the predicted GPU service time (GPUs × run
// time, in seconds), the higher the priority.
func qssfRank(predicted time.Duration, gpus int) int32 {
	return -clampInt32(int64(gpus) * int64(predicted/time.Second))
}

// bandRank ranks by the predicted GPU service time's power of two: jobs whose service
// differs by less than 2x share a priority, and among them Gantry's own order applies
// (the less-served virtual cluster first, then FIFO). Predictions are too rough to tell
// such jobs apart, and a few bands keep the engine's equivalence classes few.
func bandRank(predicted time.Duration, gpus int) int32 {
	service := uint64(max(int64(gpus)*int64(predicted/time.Second), 0))
	return -int32(bits.Len64(service))
}

func clampInt32(v int64) int32 { return int32(min(max(v, 0), math.MaxInt32)) }

// arrivalRanker sets each job's priority just before it arrives, from what the
// predictor learned from the jobs finished by then (a job finishing at the instant
// another arrives is not counted: the arrival is handled first). The simulator samples
// after every instant; at each sample the ranker ranks the jobs of the next arrival
// instant, and ranks them again at the next sample if they have not arrived by then.
type arrivalRanker struct {
	learner
	sim   *sim.Simulator
	rank  rankFunc
	order []*api.Workload // by submission time
	next  int             // the first not submitted at the last sample
	// rankedFrom and rankedAt say which batch was ranked last (its first index) and at
	// which learner count, so samples with nothing new learned rank nothing again.
	rankedFrom, rankedAt int
	// predicted is the last prediction made for each job, by ID.
	predicted map[string]time.Duration
	err       error
}

func newArrivalRanker(objs *api.Objects, pred *RuntimePredictor, rank rankFunc) *arrivalRanker {
	r := &arrivalRanker{learner: learner{pred: pred, facts: factsOf(objs)}, rank: rank,
		predicted: make(map[string]time.Duration, len(objs.Workloads)), rankedFrom: -1}
	for i := range objs.Workloads {
		r.order = append(r.order, &objs.Workloads[i])
	}
	slices.SortStableFunc(r.order, func(a, b *api.Workload) int { return cmp.Compare(a.Timing.SubmitAt, b.Timing.SubmitAt) })
	return r
}

// WantsEvent reads only finishes: rejection records are not even built for it.
func (r *arrivalRanker) WantsEvent(k sim.EventKind) bool { return k == sim.EvFinished }

// OnEvent learns from a finished job.
func (r *arrivalRanker) OnEvent(e sim.EventRecord) { r.observe(e) }

// OnSample is not called: the ranker is a DeltaObserver.
func (r *arrivalRanker) OnSample(sim.ClusterState) {}

// OnDelta ranks the next arrivals.
func (r *arrivalRanker) OnDelta(d sim.StateDelta) { r.rankNext(d.T.Duration()) }

// PredictionAccuracy is how close the run times predicted at arrival came to the real
// ones (over every job the ranker ranked).
type PredictionAccuracy struct {
	Jobs int `json:"jobs"`
	// Within2xPermille and Within10xPermille are the shares of predictions within a
	// factor 2 and 10 of the real run time; UnderPermille the share below it.
	Within2xPermille  int64 `json:"within2xPermille"`
	Within10xPermille int64 `json:"within10xPermille"`
	UnderPermille     int64 `json:"underPermille"`
}

func (r *arrivalRanker) accuracy() PredictionAccuracy {
	var in2, in10, under int64
	for id, p := range r.predicted {
		run := r.facts[id].run
		if p <= 2*run && run <= 2*p {
			in2++
		}
		if p <= 10*run && run <= 10*p {
			in10++
		}
		if p < run {
			under++
		}
	}
	n := int64(len(r.predicted))
	return PredictionAccuracy{Jobs: len(r.predicted), Within2xPermille: permille(in2, n), Within10xPermille: permille(in10, n), UnderPermille: permille(under, n)}
}

// rankNext ranks the jobs of the first arrival instant after now.
func (r *arrivalRanker) rankNext(now time.Duration) {
	for r.next < len(r.order) && r.order[r.next].Timing.SubmitAt <= now {
		r.next++
	}
	if r.rankedFrom == r.next && r.rankedAt == r.learned {
		return
	}
	r.rankedFrom, r.rankedAt = r.next, r.learned
	for i := r.next; i < len(r.order) && r.order[i].Timing.SubmitAt == r.order[r.next].Timing.SubmitAt; i++ {
		w := r.order[i]
		f := r.facts[string(w.ID())]
		p, _ := r.pred.Predict(f.queue, f.gpus)
		r.predicted[string(w.ID())] = p
		if err := r.sim.SetArrivalPriority(w.ID(), r.rank(p, f.gpus)); err != nil && r.err == nil {
			r.err = fmt.Errorf("bench jct: ranking %s: %w", w.ID(), err)
		}
	}
}
