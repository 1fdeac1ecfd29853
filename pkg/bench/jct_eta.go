package bench

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
)

// The estimates an ETA report compares (ETAAccuracy.Runtimes): explain's ETA under two
// kinds of runtime knowledge, and a queue-aware estimate under the same two.
const (
	// ETADeclared is explain's ETA as the simulator gives it: running jobs end when
	// their trace durations say, as if every job had declared its exact run time
	// (gantry.dev/duration). The best case for runtime knowledge; the error left is
	// what the ETA ignores (the jobs queued ahead, the nodes).
	ETADeclared = "declared"
	// ETALearned is the same quota ETA with running jobs' ends predicted online by
	// RuntimePredictor.Remaining (what the job's virtual cluster's finished jobs of its
	// size say of a job that has run so long), as a cluster without declared runtimes
	// could. Reservations keep the engine's ETA.
	ETALearned = "learned"
	// ETADeclaredQueue and ETALearnedQueue list-schedule the jobs queued ahead as well
	// (queueModel): the running jobs end, and the jobs ahead start in order, as the
	// declared or the learned run times say.
	ETADeclaredQueue = "declared+queue"
	ETALearnedQueue  = "learned+queue"
)

// ETAAccuracy compares, for every job that had to queue, the start time Gantry
// predicted when the job was queued (explain's ETA right after the job's first
// scheduling cycle) with the start it really got.
type ETAAccuracy struct {
	Runtimes string `json:"runtimes"`
	// Queued counts the jobs still pending after the cycles of their submission
	// instant; Started those of them that started before the replay ended.
	Queued  int `json:"queued"`
	Started int `json:"started"`
	// WithETA counts the started queued jobs that had an ETA; SharePermille is
	// WithETA / Started.
	WithETA       int   `json:"withEta"`
	SharePermille int64 `json:"sharePermille"`
	// AbsError is |ETA − start| over the jobs with an ETA.
	AbsError report.Distribution `json:"absError"`
	// EarlyPermille is the share of jobs with an ETA that started before it (explain's
	// quota ETA is a lower bound: few should, except where preemption or a freed
	// reservation lets a job in earlier than the ends it counted on).
	EarlyPermille int64 `json:"earlyPermille"`
	// P90 is the 90th percentile of AbsError (Distribution has no p90).
	P90 sim.Seconds `json:"p90"`
}

// etaProbe records every job's ETAs at its submission, when the job is queued after
// its first cycles, and each job's first start.
type etaProbe struct {
	sim   *sim.Simulator
	kinds []etaKind
	queue *queueModel
	now   time.Duration
	fresh []string // submitted at the current instant
	// eta holds each queued job's ETAs (one per kind; nil = none); start its first start.
	eta   map[string][]*sim.Seconds
	start map[string]time.Duration
	// learn is set when the probe feeds its predictor itself (no ranker does).
	learn *learner
}

// etaKind is one estimate: explain's with the running jobs' ends from end (nil: the
// simulator's own), or the queue model's with run times from left.
type etaKind struct {
	name string
	end  sim.RunningEnd
	left runLeft
}

// newETAProbe measures the declared and the learned ETAs of explain and of the queue
// model; the learned ones share the ranker's predictor when there is a ranker (the
// same predictions rank and estimate). capacity is the pool's GPUs; strict says the
// queues are StrictFIFO.
func newETAProbe(objs *api.Objects, ranker *arrivalRanker, capacity int, strict bool) *etaProbe {
	p := &etaProbe{eta: map[string][]*sim.Seconds{}, start: map[string]time.Duration{}}
	l := &learner{pred: NewRuntimePredictor(PredictRecentMedian), facts: factsOf(objs)}
	if ranker != nil {
		l = &ranker.learner
	} else {
		p.learn = l
	}
	p.queue = newQueueModel(capacity, strict, l.facts)
	p.kinds = []etaKind{
		{name: ETADeclared},
		{name: ETALearned, end: learnedEnd(l, &p.now)},
		{name: ETADeclaredQueue, left: declaredLeft},
		{name: ETALearnedQueue, left: learnedLeft(l.pred)},
	}
	return p
}

// learnedEnd predicts a running job's end from what has finished so far: now plus the
// run time expected to remain of a job of its kind that has run so long.
func learnedEnd(l *learner, now *time.Duration) sim.RunningEnd {
	return func(w *api.Workload, started, done time.Duration) (time.Duration, bool) {
		// Read from the workload, not l.facts: w.ID() would build a string for every
		// running job at every submission.
		rem, ok := l.pred.Remaining(w.Queue, int(gpusOf(w)), *now-started+done)
		if !ok {
			return 0, false
		}
		return *now + rem, true
	}
}

// WantsEvent reads what moves jobs in and out of queues and nodes.
func (p *etaProbe) WantsEvent(k sim.EventKind) bool {
	switch k {
	case sim.EvSubmitted, sim.EvPlaced, sim.EvEvicted, sim.EvRequeued, sim.EvFinished:
		return true
	}
	return false
}

// OnEvent notes submissions and first starts, and keeps the queue model (and the
// predictor, when the probe feeds it) up to date.
func (p *etaProbe) OnEvent(e sim.EventRecord) {
	p.queue.observe(e)
	switch e.Event {
	case sim.EvSubmitted:
		p.fresh = append(p.fresh, e.Workload)
	case sim.EvFinished:
		if p.learn != nil {
			p.learn.observe(e)
		}
	case sim.EvPlaced:
		if _, ok := p.start[e.Workload]; !ok {
			p.start[e.Workload] = e.T.Duration()
		}
	}
}

// OnSample is not called: the probe is a DeltaObserver.
func (p *etaProbe) OnSample(sim.ClusterState) {}

// OnDelta asks explain's ETA of every job submitted at this instant that is still
// pending after its cycles.
func (p *etaProbe) OnDelta(d sim.StateDelta) {
	p.now = d.T.Duration()
	for _, id := range p.fresh {
		if _, started := p.start[id]; started {
			continue
		}
		etas := make([]*sim.Seconds, len(p.kinds))
		for i, k := range p.kinds {
			etas[i] = p.etaOf(id, k)
		}
		p.eta[id] = etas
	}
	p.fresh = p.fresh[:0]
}

// etaOf is one kind's ETA of a job queued now; nil when it gives none.
func (p *etaProbe) etaOf(id string, k etaKind) *sim.Seconds {
	if k.left != nil {
		at, ok := p.queue.eta(id, p.now, k.left)
		if !ok {
			return nil
		}
		s := sim.Seconds(at)
		return &s
	}
	pe, ok := p.sim.PendingETAOf(api.WorkloadID(id), k.end)
	if !ok {
		return nil
	}
	at, ok := pe.ETA()
	if !ok {
		return nil
	}
	return &at
}

// accuracy summarises the probe per kind of runtime knowledge.
func (p *etaProbe) accuracy() []ETAAccuracy {
	out := make([]ETAAccuracy, len(p.kinds))
	for i, k := range p.kinds {
		a := ETAAccuracy{Runtimes: k.name, Queued: len(p.eta)}
		var errs []time.Duration
		early := 0
		for id, etas := range p.eta {
			start, ok := p.start[id]
			if !ok {
				continue
			}
			a.Started++
			if etas[i] == nil {
				continue
			}
			diff := start - etas[i].Duration()
			if diff < 0 {
				early++
				diff = -diff
			}
			errs = append(errs, diff)
		}
		a.WithETA = len(errs)
		a.SharePermille = permille(int64(a.WithETA), int64(a.Started))
		a.EarlyPermille = permille(int64(early), int64(a.WithETA))
		a.AbsError = report.Summarise(errs)
		a.P90 = sim.Seconds(report.NearestRank(a.AbsError.Values, 90))
		out[i] = a
	}
	return out
}

// permille is num/den in thousandths, rounded half up; 0 when den is 0.
func permille(num, den int64) int64 {
	if den == 0 {
		return 0
	}
	return (num*1000*2 + den) / (2 * den)
}
