package admission

import (
	"container/heap"
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Status is where a pending workload stands in the queues, with a stable reason code.
type Status struct {
	Workload     api.WorkloadID
	LocalQueue   string // "namespace/name"
	ClusterQueue string
	Code         ReasonCode // ReasonNone while it waits for its turn
	Message      string
}

// Head is a ClusterQueue's next workload to try in a cycle.
type Head struct {
	Workload     *api.Workload
	ClusterQueue string
	LocalQueue   string
	// Share is the ClusterQueue's weighted dominant resource share in thousandths when
	// fair sharing is on (the heads' order), else 0.
	Share int64
	// created caches Workload.Created in nanoseconds for sorting.
	created int64
}

// RequeueReason says what changed, for Requeue.
type RequeueReason string

const (
	// CapacityFreed: a workload finished, was evicted or preempted in ClusterQueue.
	CapacityFreed RequeueReason = "CapacityFreed"
	// QuotaChanged: quotas changed (ClusterQueue "" means anywhere).
	QuotaChanged RequeueReason = "QuotaChanged"
	// ClusterChanged: nodes came or went, so placement may now succeed.
	ClusterChanged RequeueReason = "ClusterChanged"
)

// RequeueEvent wakes inadmissible workloads that the change may help: those of every
// ClusterQueue in the same cohort tree as ClusterQueue, or of all when it is "".
type RequeueEvent struct {
	Reason       RequeueReason
	ClusterQueue string
}

// lqHeap is one LocalQueue's heap inside a ClusterQueue.
type lqHeap struct {
	key  string
	lq   *api.LocalQueue
	heap *wlHeap
}

// entry is one pending workload.
type entry struct {
	wl      *api.Workload
	lq, cq  string
	lqObj   *api.LocalQueue
	code    ReasonCode
	message string
	index   int // in its heap; -1 when not in one
}

// before orders pending workloads: higher priority first, then older, then by id.
func before(a, b *api.Workload) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.Created.Equal(b.Created) {
		return a.Created.Before(b.Created)
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	return a.Name < b.Name
}

// wlHeap is a LocalQueue's pending workloads inside one ClusterQueue.
type wlHeap []*entry

func (h wlHeap) Len() int           { return len(h) }
func (h wlHeap) Less(i, j int) bool { return before(h[i].wl, h[j].wl) }
func (h wlHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *wlHeap) Push(x any)        { e := x.(*entry); e.index = len(*h); *h = append(*h, e) }
func (h *wlHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	e.index = -1
	return e
}

// cqQueue is one ClusterQueue's pending workloads, kept per LocalQueue so admission fair
// sharing can choose among LocalQueues.
type cqQueue struct {
	cq           *api.ClusterQueue
	node         nodeID
	byLQ         map[string]*wlHeap
	lqOrder      []lqHeap // the heaps of byLQ sorted by key, for the heads loop
	inadmissible map[api.WorkloadID]*entry
	// blockedBy is StrictFIFO's failed head: the queue waits for a requeue event or an
	// arrival that sorts before it.
	blockedBy *entry
}

// Queues holds every pending workload: LocalQueue → ClusterQueue resolution, namespace
// selectors, stop policies, ordering and the inadmissible sets.
type Queues struct {
	s       *structure
	cqs     map[string]*cqQueue
	cqOrder []*cqQueue                 // sorted by name
	lqs     map[string]*api.LocalQueue // "namespace/name"
	res     *Resolver
	pending map[api.WorkloadID]*entry
	// parked holds workloads that cannot enter a ClusterQueue (missing queue, namespace
	// not selected), with their reason; they are retried by Requeue(QuotaChanged).
	parked map[api.WorkloadID]*entry
}

func newQueues(s *structure, objs *api.Objects) (*Queues, error) {
	res, err := NewResolver(objs)
	if err != nil {
		return nil, err
	}
	q := &Queues{s: s, cqs: map[string]*cqQueue{}, lqs: res.lqs, res: res,
		pending: map[api.WorkloadID]*entry{}, parked: map[api.WorkloadID]*entry{}}
	for _, n := range s.nodes {
		if !n.isCQ {
			continue
		}
		id, _ := s.cqID(n.name)
		q.cqs[n.name] = &cqQueue{cq: n.cq, node: id, byLQ: map[string]*wlHeap{}, inadmissible: map[api.WorkloadID]*entry{}}
		q.cqOrder = append(q.cqOrder, q.cqs[n.name])
	}
	return q, nil
}

// rebind points the queues at a rebuilt structure (same ClusterQueue names).
func (q *Queues) rebind(s *structure) {
	q.s = s
	for _, c := range q.cqOrder {
		id, _ := s.cqID(c.cq.Name)
		c.node, c.cq = id, s.nodes[id].cq
	}
}

// resolve finds wl's ClusterQueue, or the reason it has none it may use (the
// Resolver's rules).
func (q *Queues) resolve(wl *api.Workload) (lqKey string, cq *cqQueue, code ReasonCode, msg string) {
	r := q.res.Resolve(wl)
	return r.LocalQueue, q.cqs[r.ClusterQueue], r.Code, r.Message
}

// Add enqueues a pending workload and returns its status. A workload whose queue is
// missing or whose namespace is not selected is kept aside with that reason.
func (q *Queues) Add(wl *api.Workload) (Status, error) {
	if wl == nil {
		return Status{}, fmt.Errorf("admission: Add: nil workload")
	}
	id := wl.ID()
	if _, dup := q.pending[id]; dup {
		return Status{}, fmt.Errorf("workload %s: already pending", id)
	}
	if _, dup := q.parked[id]; dup {
		return Status{}, fmt.Errorf("workload %s: already pending", id)
	}
	lqKey, cq, code, msg := q.resolve(wl)
	e := &entry{wl: wl, lq: lqKey, lqObj: q.lqs[lqKey], code: code, message: msg, index: -1}
	if cq != nil {
		e.cq = cq.cq.Name
	}
	if code != ReasonNone {
		q.parked[id] = e
		return e.status(), nil
	}
	q.pending[id] = e
	cq.push(e)
	return e.status(), nil
}

func (e *entry) status() Status {
	return Status{Workload: e.wl.ID(), LocalQueue: e.lq, ClusterQueue: e.cq, Code: e.code, Message: e.message}
}

func (c *cqQueue) push(e *entry) {
	h, ok := c.byLQ[e.lq]
	if !ok {
		h = &wlHeap{}
		c.byLQ[e.lq] = h
		c.lqOrder = append(c.lqOrder, lqHeap{key: e.lq, lq: e.lqObj, heap: h})
		sort.Slice(c.lqOrder, func(i, j int) bool { return c.lqOrder[i].key < c.lqOrder[j].key })
	}
	heap.Push(h, e)
	if c.blockedBy != nil && before(e.wl, c.blockedBy.wl) {
		c.unblock() // a new, earlier head: StrictFIFO tries it
	}
}

// unblock lets a StrictFIFO queue try its head again; the head's old reason is dropped.
func (c *cqQueue) unblock() {
	if c.blockedBy != nil {
		c.blockedBy.code, c.blockedBy.message = ReasonNone, ""
		c.blockedBy = nil
	}
}

// Remove drops a workload from the queues (admitted, deleted). It reports whether it
// was pending.
func (q *Queues) Remove(id api.WorkloadID) bool {
	if _, ok := q.parked[id]; ok {
		delete(q.parked, id)
		return true
	}
	e, ok := q.pending[id]
	if !ok {
		return false
	}
	delete(q.pending, id)
	c := q.cqs[e.cq]
	if e.index >= 0 {
		h := c.byLQ[e.lq]
		heap.Remove(h, e.index)
		if c.blockedBy == e {
			c.blockedBy = nil
		}
	} else {
		delete(c.inadmissible, id)
	}
	return true
}

// Len is the number of pending workloads, parked ones included.
func (q *Queues) Len() int { return len(q.pending) + len(q.parked) }

// Status reports where a pending workload stands.
func (q *Queues) Status(id api.WorkloadID) (Status, bool) {
	if e, ok := q.parked[id]; ok {
		return e.status(), true
	}
	e, ok := q.pending[id]
	if !ok {
		return Status{}, false
	}
	st := e.status()
	c := q.cqs[e.cq]
	if st.Code == ReasonNone {
		switch {
		case held(c.cq.StopPolicy) || held(q.lqs[e.lq].StopPolicy):
			st.Code, st.Message = QueueHeld, "the queue is held by its stopPolicy"
		case c.blockedBy != nil && c.blockedBy != e:
			st.Code, st.Message = BlockedByHead, fmt.Sprintf("StrictFIFO: clusterqueue %q's head is not admissible yet", c.cq.Name)
		}
	}
	return st, true
}

func held(p api.StopPolicy) bool { return p == api.StopHold || p == api.StopHoldAndDrain }

// SetInadmissible records why a head could not be admitted. Under BestEffortFIFO it is
// set aside so the next workload is tried; under StrictFIFO it stays at the head and its
// ClusterQueue waits. Either way nothing is retried until Requeue reports a change, so
// cycles do not spin on the same failure.
func (q *Queues) SetInadmissible(id api.WorkloadID, code ReasonCode, message string) bool {
	e, ok := q.pending[id]
	if !ok {
		return false
	}
	e.code, e.message = code, message
	c := q.cqs[e.cq]
	if c.cq.QueueingStrategy == api.StrictFIFO {
		if e.index == 0 {
			c.blockedBy = e
		}
		return true
	}
	if e.index >= 0 {
		heap.Remove(c.byLQ[e.lq], e.index)
		c.inadmissible[id] = e
	}
	return true
}

// Requeue moves inadmissible workloads back into their queues when ev may help them.
// It returns how many were woken.
func (q *Queues) Requeue(ev RequeueEvent) int {
	woken := 0
	var root nodeID = noNode
	if ev.ClusterQueue != "" {
		if id, ok := q.s.cqID(ev.ClusterQueue); ok {
			root = q.s.rootOf[id]
		}
	}
	for _, c := range q.cqOrder {
		if root != noNode && q.s.rootOf[c.node] != root {
			continue
		}
		c.unblock()
		ids := make([]api.WorkloadID, 0, len(c.inadmissible))
		for id := range c.inadmissible {
			ids = append(ids, id)
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		for _, id := range ids {
			e := c.inadmissible[id]
			delete(c.inadmissible, id)
			e.code, e.message = ReasonNone, ""
			c.push(e)
			woken++
		}
	}
	if ev.Reason == QuotaChanged || ev.ClusterQueue == "" {
		woken += q.retryParked()
	}
	return woken
}

// retryParked re-resolves parked workloads (queues or namespaces may have changed).
func (q *Queues) retryParked() int {
	ids := make([]api.WorkloadID, 0, len(q.parked))
	for id := range q.parked {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	n := 0
	for _, id := range ids {
		e := q.parked[id]
		if _, _, code, _ := q.resolve(e.wl); code == ReasonNone {
			delete(q.parked, id)
			if _, err := q.Add(e.wl); err == nil {
				n++
			}
		}
	}
	return n
}

// heads returns each ClusterQueue's head, skipping held and blocked queues. lqUsage
// gives a LocalQueue's weighted decayed usage for admission fair sharing (nil: off).
func (q *Queues) heads(lqUsage func(lq string) int64) []Head {
	var out []Head
	for _, c := range q.cqOrder {
		if held(c.cq.StopPolicy) || c.blockedBy != nil {
			continue
		}
		if e := q.head(c, lqUsage); e != nil {
			out = append(out, Head{Workload: e.wl, ClusterQueue: c.cq.Name, LocalQueue: e.lq, created: e.wl.Created.UnixNano()})
		}
	}
	return out
}

// head picks the first workload among the LocalQueues' heaps: by the workload order, or
// with admission fair sharing by the LocalQueue with the least weighted usage first.
func (q *Queues) head(c *cqQueue, lqUsage func(string) int64) *entry {
	var best *entry
	var bestUsage int64
	afs := c.cq.AdmissionFairSharing.Enabled && lqUsage != nil
	for _, l := range c.lqOrder {
		h := l.heap
		if h.Len() == 0 || held(l.lq.StopPolicy) {
			continue
		}
		e := (*h)[0]
		var u int64
		if afs {
			u = lqUsage(l.key)
		}
		if best == nil || (afs && u < bestUsage) || ((!afs || u == bestUsage) && before(e.wl, best.wl)) {
			best, bestUsage = e, u
		}
	}
	return best
}
