package sim

import (
	"container/heap"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// eventKind is an internal simulator event (not a log record).
type eventKind int

const (
	kArrival   eventKind = iota + 1 // a workload is submitted
	kFinish                         // a running workload completes (if still the same run)
	kEvict                          // a noticed workload's grace period is over
	kCluster                        // an api.ClusterEvent happens
	kNodesGone                      // spot notice over: interrupted nodes go away
	kNodesBack                      // spot capacity returns / a re-layout completes
	kWake                           // a requeue backoff ends: run a cycle
	kReady                          // a run's pods are all Ready (podsready.go)
	kNotReady                       // waitForPodsReady timeout: pods not all Ready (podsready.go)
	kProvision                      // a ProvisioningRequest ends (provision*.go)
)

// simEvent is one entry of the event queue.
type simEvent struct {
	at    time.Duration
	seq   int64 // insertion order: ties at the same time run in the order scheduled
	kind  eventKind
	wl    api.WorkloadID
	run   int // the workload's run number the event belongs to (stale events are dropped)
	index int // kCluster: index into the cluster events
	nodes []string
	layer string
}

// eventQueue is a min-heap by (at, seq): deterministic ordering for equal times.
type eventQueue struct {
	items []simEvent
	seq   int64
}

func (q *eventQueue) Len() int { return len(q.items) }
func (q *eventQueue) Less(i, j int) bool {
	if q.items[i].at != q.items[j].at {
		return q.items[i].at < q.items[j].at
	}
	return q.items[i].seq < q.items[j].seq
}
func (q *eventQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *eventQueue) Push(x any)    { q.items = append(q.items, x.(simEvent)) }
func (q *eventQueue) Pop() any {
	last := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return last
}

// schedule adds an event, stamping its sequence number.
func (q *eventQueue) schedule(e simEvent) {
	q.seq++
	e.seq = q.seq
	heap.Push(q, e)
}

// peek returns the earliest event without removing it.
func (q *eventQueue) peek() (simEvent, bool) {
	if len(q.items) == 0 {
		return simEvent{}, false
	}
	return q.items[0], true
}

// next removes and returns the earliest event.
func (q *eventQueue) next() simEvent { return heap.Pop(q).(simEvent) }
