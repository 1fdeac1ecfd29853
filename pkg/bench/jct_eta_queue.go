package bench

import (
	"cmp"
	"container/heap"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
)

// queueModel follows a replay through its events: the jobs waiting, in the engine's
// order as far as the events show it (priority, then queue time, then ID; the fair
// share between ClusterQueues is left out), and the jobs running, with their start and
// earlier progress. It estimates a queued job's start by list scheduling: the running
// jobs end as a runtime belief says, the jobs ahead start in order as soon as their
// GPUs are free, and the job starts when its own are. Philly's virtual clusters share
// one cohort and may borrow all of it, so the GPUs of the whole pool are one resource
// here; the nodes (whole-node gangs) are not modelled.
type queueModel struct {
	capacity int
	strict   bool // StrictFIFO: a job that does not fit holds back its queue
	facts    map[string]jobFacts
	jobs     map[string]*qJob // submitted, not finished
	running  map[string]*qJob
	pending  []*qJob // sorted by qJob.before
	used     int
}

// qJob is one job as the queue model knows it.
type qJob struct {
	id       string
	f        jobFacts
	priority int32
	queued   time.Duration // when it last entered its queue
	started  time.Duration // start of the current run
	done     time.Duration // work done by earlier runs
	running  bool
}

// before is the engine's order of waiting jobs, less the fair share.
func (a *qJob) before(b *qJob) int {
	return cmp.Or(-cmp.Compare(a.priority, b.priority), cmp.Compare(a.queued, b.queued), cmp.Compare(a.id, b.id))
}

func newQueueModel(capacity int, strict bool, facts map[string]jobFacts) *queueModel {
	return &queueModel{capacity: capacity, strict: strict, facts: facts, jobs: map[string]*qJob{}, running: map[string]*qJob{}}
}

// observe applies one event record.
func (m *queueModel) observe(e sim.EventRecord) {
	now := e.T.Duration()
	switch e.Event {
	case sim.EvSubmitted:
		j := &qJob{id: e.Workload, f: m.facts[e.Workload], priority: e.Priority, queued: now}
		m.jobs[j.id] = j
		m.wait(j)
	case sim.EvPlaced:
		if j := m.jobs[e.Workload]; j != nil && !j.running {
			m.unwait(j)
			j.running, j.started = true, now
			m.running[j.id] = j
			m.used += j.f.gpus
		}
	case sim.EvEvicted:
		if j := m.jobs[e.Workload]; j != nil && j.running {
			j.running, j.done = false, j.done+now-j.started
			delete(m.running, j.id)
			m.used -= j.f.gpus
		}
	case sim.EvRequeued:
		if j := m.jobs[e.Workload]; j != nil && !j.running {
			j.queued = now
			m.wait(j)
		}
	case sim.EvFinished:
		if j := m.jobs[e.Workload]; j != nil {
			if j.running {
				m.used -= j.f.gpus
			}
			delete(m.running, j.id)
			delete(m.jobs, j.id)
		}
	}
}

func (m *queueModel) wait(j *qJob) {
	i, _ := slices.BinarySearchFunc(m.pending, j, (*qJob).before)
	m.pending = slices.Insert(m.pending, i, j)
}

func (m *queueModel) unwait(j *qJob) {
	if i, found := slices.BinarySearchFunc(m.pending, j, (*qJob).before); found {
		m.pending = slices.Delete(m.pending, i, i+1)
	}
}

// runLeft is the run time a job still needs by a runtime belief, given the work it has
// done (ran); false when the belief knows nothing.
type runLeft func(f jobFacts, ran time.Duration) (time.Duration, bool)

// eta list-schedules the jobs ahead of id from now on; false when id is not waiting or
// some job ahead of it has no known end.
func (m *queueModel) eta(id string, now time.Duration, left runLeft) (time.Duration, bool) {
	me := m.jobs[id]
	if me == nil || me.running {
		return 0, false
	}
	ahead, found := slices.BinarySearchFunc(m.pending, me, (*qJob).before)
	if !found {
		return 0, false
	}
	ends := make(endHeap, 0, len(m.running))
	for _, j := range m.running {
		rem, ok := left(j.f, j.done+now-j.started)
		if !ok {
			return 0, false
		}
		ends = append(ends, jobEnd{at: now + rem, gpus: j.f.gpus})
	}
	heap.Init(&ends)
	s := listSchedule{m: m, ends: &ends, free: m.capacity - m.used, left: left, started: make([]bool, ahead)}
	return s.run(m.pending[:ahead], me, now)
}

// listSchedule is one eta computation's state.
type listSchedule struct {
	m       *queueModel
	ends    *endHeap
	free    int
	left    runLeft
	started []bool // per job ahead
	first   int    // jobs ahead before it have all started
}

func (s *listSchedule) run(ahead []*qJob, me *qJob, t time.Duration) (time.Duration, bool) {
	for {
		blocked, ok := s.startFitting(ahead, t)
		if !ok {
			return 0, false
		}
		if me.f.gpus <= s.free && !blocked[me.f.queue] {
			return t, true
		}
		if s.ends.Len() == 0 {
			return 0, false // it needs more GPUs than the pool has
		}
		t = s.release()
	}
}

// startFitting starts, in order, every job ahead that fits in the free GPUs at t (in a
// strict queue only up to its first job that does not fit); it returns the queues
// held back, and false when a started job has no known end.
func (s *listSchedule) startFitting(ahead []*qJob, t time.Duration) (map[string]bool, bool) {
	var blocked map[string]bool
	for s.first < len(ahead) && s.started[s.first] {
		s.first++
	}
	for i := s.first; i < len(ahead) && s.free > 0; i++ {
		j := ahead[i]
		if s.started[i] || blocked[j.f.queue] {
			continue
		}
		if j.f.gpus > s.free {
			if s.m.strict {
				if blocked == nil {
					blocked = map[string]bool{}
				}
				blocked[j.f.queue] = true
			}
			continue
		}
		rem, ok := s.left(j.f, j.done)
		if !ok {
			return nil, false
		}
		s.started[i], s.free = true, s.free-j.f.gpus
		heap.Push(s.ends, jobEnd{at: t + rem, gpus: j.f.gpus})
	}
	return blocked, true
}

// release frees the GPUs of every job ending at the earliest end and returns it.
func (s *listSchedule) release() time.Duration {
	t := (*s.ends)[0].at
	for s.ends.Len() > 0 && (*s.ends)[0].at == t {
		s.free += heap.Pop(s.ends).(jobEnd).gpus
	}
	return t
}

// jobEnd is when a job's GPUs come free.
type jobEnd struct {
	at   time.Duration
	gpus int
}

// endHeap is a min-heap of ends by time.
type endHeap []jobEnd

func (h endHeap) Len() int           { return len(h) }
func (h endHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h endHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)        { *h = append(*h, x.(jobEnd)) }
func (h *endHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// declaredLeft is the trace's run time less the work done: what a job that declared
// its exact run time would say.
func declaredLeft(f jobFacts, ran time.Duration) (time.Duration, bool) {
	return max(f.run-ran, 0), true
}

// learnedLeft is the predictor's expected remaining run time.
func learnedLeft(p *RuntimePredictor) runLeft {
	return func(f jobFacts, ran time.Duration) (time.Duration, bool) {
		return p.Remaining(f.queue, f.gpus, ran)
	}
}
