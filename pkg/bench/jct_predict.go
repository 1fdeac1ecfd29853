package bench

import (
	"slices"
	"time"
)

// PredictMethod is how a RuntimePredictor turns a history of run times into a prediction.
type PredictMethod int

const (
	// PredictMean is Helios' estimator for QSSF (its artifact's NaiveEstimator, without
	// job names, which the Philly trace lacks): the mean run time of the finished jobs of
	// the same queue and GPU count, else of the queue's jobs, else of every job.
	PredictMean PredictMethod = iota
	// PredictRecentMedian is the median of the last recentRuns finished jobs of the same
	// queue and GPU count (else of the queue, else of every job): a queue's jobs come in
	// campaigns of similar runs, and a median is not dragged by the few week-long ones.
	PredictRecentMedian
)

// recentRuns is how many recent run times a history keeps per key, for medians and for
// the expected remaining time of a running job.
const recentRuns = 64

// defaultRuntime is the prediction before any job has finished.
const defaultRuntime = time.Hour

// RuntimePredictor learns run times online: it sees a job's run time only once the job
// has finished (Observe), and predicts a job from the jobs finished so far (Predict), so
// replaying a trace through it never looks ahead. Jobs are keyed by queue (Philly's
// virtual cluster: the trace has no user or job name) and GPU count.
type RuntimePredictor struct {
	method PredictMethod
	keyed  map[predictKey]*runHistory
	queue  map[string]*runHistory
	all    runHistory
}

type predictKey struct {
	queue string
	gpus  int
}

// NewRuntimePredictor returns a predictor with no history.
func NewRuntimePredictor(m PredictMethod) *RuntimePredictor {
	return &RuntimePredictor{method: m, keyed: map[predictKey]*runHistory{}, queue: map[string]*runHistory{}}
}

// Observe records a finished job's run time.
func (p *RuntimePredictor) Observe(queue string, gpus int, run time.Duration) {
	k := predictKey{queue, gpus}
	if p.keyed[k] == nil {
		p.keyed[k] = &runHistory{}
	}
	if p.queue[queue] == nil {
		p.queue[queue] = &runHistory{}
	}
	p.keyed[k].add(run)
	p.queue[queue].add(run)
	p.all.add(run)
}

// Predict is the expected run time of a job of queue and gpus; false when nothing has
// finished yet (then defaultRuntime).
func (p *RuntimePredictor) Predict(queue string, gpus int) (time.Duration, bool) {
	h := p.history(queue, gpus)
	if h == nil {
		return defaultRuntime, false
	}
	if p.method == PredictRecentMedian {
		return h.recentMedian(), true
	}
	return h.mean(), true
}

// Remaining is the expected run time left to a job of queue and gpus that has run for
// ran: the (lower) median, less ran, of the recent runs of its kind that lasted longer
// than ran.
// A job that outlived every one of them is expected to run as long again (a job's age
// is the best guide left in a heavy-tailed distribution). False when nothing has
// finished yet.
func (p *RuntimePredictor) Remaining(queue string, gpus int, ran time.Duration) (time.Duration, bool) {
	h := p.history(queue, gpus)
	if h == nil {
		return 0, false
	}
	sorted := h.sortedRecent()
	i, _ := slices.BinarySearch(sorted, ran+1) // the first run longer than ran
	if i == len(sorted) {
		return max(ran, time.Minute), true
	}
	return sorted[i+(len(sorted)-1-i)/2] - ran, true
}

// history is the most specific history with any run: the queue and GPU count, the
// queue, every job; nil when nothing has finished.
func (p *RuntimePredictor) history(queue string, gpus int) *runHistory {
	if h := p.keyed[predictKey{queue, gpus}]; h != nil {
		return h
	}
	if h := p.queue[queue]; h != nil {
		return h
	}
	if p.all.n > 0 {
		return &p.all
	}
	return nil
}

// runHistory is the run times of one key: their count and sum (for the mean) and the
// last recentRuns of them.
type runHistory struct {
	n      int64
	sumMs  int64 // milliseconds: the sum of a trace's nanoseconds would overflow
	recent []time.Duration
	next   int // where the next run goes once recent is full
	// sorted is recent sorted, rebuilt on demand after an add (nil): a replay asks the
	// remaining time of every running job at every submission.
	sorted []time.Duration
}

// sortedRecent is the recent runs sorted (shared: callers must not modify it).
func (h *runHistory) sortedRecent() []time.Duration {
	if h.sorted == nil {
		h.sorted = slices.Clone(h.recent)
		slices.Sort(h.sorted)
	}
	return h.sorted
}

func (h *runHistory) add(d time.Duration) {
	h.n++
	h.sorted = nil
	h.sumMs += d.Milliseconds()
	if len(h.recent) < recentRuns {
		h.recent = append(h.recent, d)
		return
	}
	h.recent[h.next] = d
	h.next = (h.next + 1) % recentRuns
}

func (h *runHistory) mean() time.Duration {
	return time.Duration(h.sumMs/h.n) * time.Millisecond
}

// recentMedian is the median of the last recentRuns/2 runs (the latest ones: a queue's
// campaigns change within days).
func (h *runHistory) recentMedian() time.Duration {
	const window = recentRuns / 2
	if len(h.recent) <= window {
		return median(slices.Clone(h.recent))
	}
	last := make([]time.Duration, 0, window)
	for i := 1; i <= window; i++ {
		last = append(last, h.recent[(h.next-i+2*len(h.recent))%len(h.recent)])
	}
	return median(last)
}

// median sorts v in place and returns its lower median; v must not be empty.
func median(v []time.Duration) time.Duration {
	slices.Sort(v)
	return v[(len(v)-1)/2]
}
