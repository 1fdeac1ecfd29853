package engine

import (
	"container/heap"
	"fmt"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// QueuedQuotaETA estimates when a workload held by quota could be admitted, counting
// the workloads queued ahead of it in its ClusterQueue as well as the running ones: on
// a copy of the quota, the workloads ahead are admitted in queue order as soon as they
// fit (each then ends after its expected run time; one without a known run time holds
// its quota), the running ones are released at their expected ends, and the estimate is
// the first moment the workload itself fits. In a StrictFIFO queue the workloads ahead
// start strictly in order and the workload only after all of them. The nodes, and
// workloads of other ClusterQueues waiting for the cohort's quota, are not counted.
// ok is false when no known end frees enough. The simulator's explain and the
// controller's Workload status both estimate with it.
func (s *Scheduler) QueuedQuotaETA(q *admission.Quota, id api.WorkloadID, ending []Ending, now time.Time) (QueueETA, bool) {
	me := s.wls[id]
	if me == nil || me.phase != phasePending || q == nil {
		return QueueETA{}, false
	}
	cq := me.res.ClusterQueue
	ls := listSchedule{q: q.Clone(), cq: cq, strict: me.cq != nil && me.cq.strategy == api.StrictFIFO, ahead: s.queuedAhead(me, q)}
	ls.started, ls.short = make([]bool, len(ls.ahead)), map[int32]bool{}
	ls.ends = append(ls.ends, ending...)
	heap.Init(&ls.ends)
	eta := QueueETA{At: now, Ahead: len(ls.ahead)}
	for {
		if ls.startFitting(eta.At) && ls.q.Assign(me.w, cq).Fits() {
			return eta, true
		}
		if ls.ends.Len() == 0 {
			return QueueETA{}, false
		}
		var last api.WorkloadID
		eta.At, last = ls.release()
		eta.At = later(eta.At, now) // a workload overdue ends now at the earliest
		if last != "" {
			eta.After = last
		}
	}
}

// QueueETA is a QueuedQuotaETA: when, the workload whose end freed the last quota it
// needs ("" when enough is free at once), and how many workloads were queued ahead.
type QueueETA struct {
	At    time.Time
	After api.WorkloadID
	Ahead int
}

// Basis says what the estimate rests on, for explain and the Workload status.
func (e QueueETA) Basis() string {
	free := "enough quota is free now"
	if e.After != "" {
		free = "enough quota is free once " + string(e.After) + " ends"
	}
	ahead := "no workload is queued ahead in its ClusterQueue"
	switch {
	case e.Ahead == 1:
		ahead = "the workload queued ahead in its ClusterQueue starts first"
	case e.Ahead > 1:
		ahead = fmt.Sprintf("the %d workloads queued ahead in its ClusterQueue start first", e.Ahead)
	}
	return "estimated from quota: " + free + "; " + ahead +
		" (workloads ending as expected; nodes and other queues of the cohort not counted)"
}

func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

// queuedAhead are the pending workloads of me's ClusterQueue the engine tries before
// it (within one queue: higher priority, then earlier queued, created, ID), in order;
// those q holds as admitted already (a plan being committed) are counted there.
func (s *Scheduler) queuedAhead(me *entry, q *admission.Quota) []*entry {
	var out []*entry
	for _, e := range s.wls {
		if e == me || e.phase != phasePending || e.res.ClusterQueue != me.res.ClusterQueue || !queueBefore(e, me) {
			continue
		}
		if _, admitted := q.Admitted(e.id); !admitted {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return queueBefore(out[i], out[j]) })
	return out
}

// queueBefore is the engine's order of two workloads of one ClusterQueue (headKey less
// the cohort share, which they share, and the preemptor and LocalQueue-usage terms).
func queueBefore(a, b *entry) bool {
	switch {
	case a.w.Priority != b.w.Priority:
		return a.w.Priority > b.w.Priority
	case a.queuedNano != b.queuedNano:
		return a.queuedNano < b.queuedNano
	case a.createdNano != b.createdNano:
		return a.createdNano < b.createdNano
	}
	return a.id < b.id
}

// listSchedule is one QueuedQuotaETA's state: the quota copy, the workloads ahead and
// which of them started, and the ends still to come.
type listSchedule struct {
	q       *admission.Quota
	cq      string
	strict  bool
	ahead   []*entry
	started []bool
	first   int // ahead[:first] have all started
	short   map[int32]bool
	ends    endingHeap
}

// startFitting admits, in queue order, every workload ahead that fits at t (in a strict
// queue only up to the first that does not); true when none ahead still holds the
// workload back (any may run first in a best-effort queue).
func (ls *listSchedule) startFitting(t time.Time) bool {
	all := true
	// Admitting only takes quota, so a quota class that did not fit earlier in this
	// pass does not fit later in it: its other workloads are not asked again.
	clear(ls.short)
	for ; ls.first < len(ls.ahead) && ls.started[ls.first]; ls.first++ {
	}
	for i := ls.first; i < len(ls.ahead); i++ {
		e := ls.ahead[i]
		if ls.started[i] {
			continue
		}
		if ls.short[e.quotaClass] {
			all = false
			continue
		}
		a := ls.q.Assign(e.w, ls.cq)
		if !a.Fits() || ls.q.Admit(e.w, a) != nil {
			all = false
			if ls.strict {
				return false
			}
			ls.short[e.quotaClass] = true
			continue
		}
		ls.started[i] = true
		if e.runtime > 0 {
			heap.Push(&ls.ends, Ending{Workload: e.id, At: t.Add(e.runtime)})
		}
	}
	return all || !ls.strict
}

// release releases every workload ending at the earliest end; it returns that time and
// the last workload released.
func (ls *listSchedule) release() (time.Time, api.WorkloadID) {
	t := ls.ends[0].At
	var last api.WorkloadID
	for ls.ends.Len() > 0 && ls.ends[0].At.Equal(t) {
		e := heap.Pop(&ls.ends).(Ending)
		if ls.q.Release(e.Workload) == nil {
			last = e.Workload
		}
	}
	return t, last
}

// endingHeap orders ends by time, then workload (same inputs, same ETA).
type endingHeap []Ending

func (h endingHeap) Len() int { return len(h) }
func (h endingHeap) Less(i, j int) bool {
	if !h[i].At.Equal(h[j].At) {
		return h[i].At.Before(h[j].At)
	}
	return h[i].Workload < h[j].Workload
}
func (h endingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endingHeap) Push(x any)   { *h = append(*h, x.(Ending)) }
func (h *endingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
