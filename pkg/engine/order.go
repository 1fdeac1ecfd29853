package engine

import (
	"encoding/binary"
	"slices"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// headKey is what pending workloads are ordered by: a preemptor whose victims were
// given notice first (the room they free is for it: were a victim tried first, it could
// take the room back, and the preemptor, which preempts a workload at most once, would
// wait behind it until it ends; Kueue admits a preemptor as soon as its victims' quota
// is released, to the same effect), then Kueue's head rank (order_rank.go: under fair
// sharing the standings in the tournament from the root down, otherwise the borrowing
// level; quota from nearer first), then higher priority, then the less-served
// ClusterQueue (lower dominant share as the cycle starts), then the less-used LocalQueue
// (only where admission fair sharing is on), then earlier queued, then earlier created,
// then ID so the order is total and deterministic.
type headKey struct {
	preempting bool
	level      int16 // the borrowing level (0 under fair sharing)
	priority   int32
	// fair holds the fair-sharing standings (nil: none, or all zero); workloads of one
	// ClusterQueue and shape share one.
	fair    *admission.HeadRank
	share   int64
	lqUsage int64
	queued  int64
	created int64
	// idHi and idLo are the first 16 bytes of id, big-endian: workloads submitted
	// together tie on every other field, and comparing numbers spares reading the
	// strings (a cache miss each in heaps of thousands).
	idHi, idLo uint64
	id         string
}

// idPrefix packs the first 16 bytes of id big-endian, zero-padded: prefixes order as
// the strings do, and equal prefixes leave the order to the strings (IDs hold no zero
// bytes).
func idPrefix(id string) (hi, lo uint64) {
	var b [16]byte
	copy(b[:], id)
	return binary.BigEndian.Uint64(b[:8]), binary.BigEndian.Uint64(b[8:])
}

func (a headKey) less(b headKey) bool {
	if a.preempting != b.preempting {
		return a.preempting
	}
	if a.fair != b.fair {
		if c := compareStandings(a.fair, b.fair); c != 0 {
			return c < 0
		}
	}
	switch {
	case a.level != b.level:
		return a.level < b.level
	case a.priority != b.priority:
		return a.priority > b.priority
	case a.share != b.share:
		return a.share < b.share
	case a.lqUsage != b.lqUsage:
		return a.lqUsage < b.lqUsage
	case a.queued != b.queued:
		return a.queued < b.queued
	case a.created != b.created:
		return a.created < b.created
	case a.idHi != b.idHi:
		return a.idHi < b.idHi
	case a.idLo != b.idLo:
		return a.idLo < b.idLo
	}
	return a.id < b.id
}

// keyer makes head keys with the ClusterQueue shares and the head ranks as the cycle
// started (the cycle's admissions move them; a workload handed in later by Followers is
// ordered by the same).
type keyer struct {
	q         Quota
	nominated map[api.WorkloadID][]api.WorkloadID
	shares    map[string]int64
	// ranks are the head ranks (nil: all alike); set before any key is made.
	ranks *headRanks
}

func newKeyer(q Quota, nominated map[api.WorkloadID][]api.WorkloadID, pending []Pending, more []string) *keyer {
	k := &keyer{q: q, nominated: nominated, shares: map[string]int64{}}
	for _, p := range pending {
		k.share(p.ClusterQueue)
	}
	for _, cq := range more {
		k.share(cq)
	}
	return k
}

func (k *keyer) share(cq string) int64 {
	s, ok := k.shares[cq]
	if !ok && cq != "" {
		s = k.q.Share(cq)
		k.shares[cq] = s
	}
	return s
}

func (k *keyer) key(p Pending) headKey {
	id := string(p.id())
	hi, lo := idPrefix(id)
	level, fair := rankFields(k.ranks.of(p))
	return headKey{
		preempting: len(k.nominated) > 0 && len(k.nominated[p.id()]) > 0,
		level:      level,
		priority:   p.Workload.Priority,
		fair:       fair,
		share:      k.share(p.ClusterQueue),
		lqUsage:    p.LocalQueueUsage,
		queued:     p.QueuedAt.UnixNano(),
		created:    p.Workload.Created.UnixNano(),
		idHi:       hi,
		idLo:       lo,
		id:         id,
	}
}

// visits is the cycle's order of visits: the pending workloads sorted by head key, merged
// with the class members Followers hands in while the cycle runs (each at its own key,
// so the visits come in the order a cycle handed every one of them would take).
type visits struct {
	k       *keyer
	sorted  []Pending
	keys    []headKey
	next    int
	later   keyedHeap
	pos     map[*api.Workload]int // 1-based place within its ClusterQueue (keyed by pointer: no hashing of IDs)
	perCQ   map[string]int
	fetched map[api.WorkloadID]bool // handed in by Followers
	// gates are the sources of visits that must pass a test at their turn (Input's
	// QuotaSeekers); seekers are the slot-seeker classes (reserve_seekers.go).
	gates   []*gated
	seekers *seekerClasses
}

func newVisits(pending []Pending, k *keyer) *visits {
	keys := make([]headKey, len(pending))
	for i, p := range pending {
		keys[i] = k.key(p)
	}
	idx := make([]int, len(pending))
	for i := range idx {
		idx[i] = i
	}
	// Keys are total (the ID comes last), so any sort gives the one order.
	slices.SortFunc(idx, func(a, b int) int {
		switch {
		case a == b:
			return 0
		case keys[a].less(keys[b]):
			return -1
		}
		return 1
	})
	v := &visits{k: k, sorted: make([]Pending, len(pending)), keys: make([]headKey, len(pending)),
		pos: make(map[*api.Workload]int, len(pending)), perCQ: map[string]int{}}
	for i, j := range idx {
		v.sorted[i], v.keys[i] = pending[j], keys[j]
		v.place(pending[j])
	}
	return v
}

// place gives p the next position in its ClusterQueue.
func (v *visits) place(p Pending) {
	v.perCQ[p.ClusterQueue]++
	v.pos[p.Workload] = v.perCQ[p.ClusterQueue]
}

// add hands in a class member while the cycle runs.
func (v *visits) add(p Pending) {
	if v.fetched == nil {
		v.fetched = map[api.WorkloadID]bool{}
	}
	v.fetched[p.id()] = true
	v.place(p)
	v.later.push(p, v.k.key(p))
}

// pop is the next workload to visit: the least of the sorted ones, those handed in
// later and the gated sources' tops. A gated one its test stops is dropped unvisited.
func (v *visits) pop() (Pending, bool) {
	for {
		var best *headKey
		from := fromNone
		if v.next < len(v.sorted) {
			best, from = &v.keys[v.next], fromSorted
		}
		if v.later.len() > 0 && (best == nil || v.later.top().less(*best)) {
			best, from = v.later.top(), fromLater
		}
		for i, g := range v.gates {
			if g.heap.len() > 0 && (best == nil || g.heap.top().less(*best)) {
				best, from = g.heap.top(), i
			}
		}
		if sc := v.seekers; sc != nil && len(sc.heap) > 0 && (best == nil || sc.heap[0].k.less(*best)) {
			from = fromSeekers
		}
		switch from {
		case fromNone:
			return Pending{}, false
		case fromSeekers:
			if p, ok := v.seekers.take(v.k); ok {
				v.place(p)
				return p, true
			}
			continue
		case fromSorted:
			v.next++
			return v.sorted[v.next-1], true
		case fromLater:
			return v.later.pop(), true
		}
		g := v.gates[from]
		if p := g.heap.pop(); g.pass(p) {
			v.place(p)
			return p, true
		}
	}
}

// Where pop's next visit comes from (a gated source is its index).
const (
	fromNone    = -1
	fromSorted  = -2
	fromLater   = -3
	fromSeekers = -4
)

// gated is a source of visits apart from Pending: its members come at their place in
// the order, each visited only when pass lets it through at its turn.
type gated struct {
	heap keyedHeap
	pass func(Pending) bool
}

// gate adds ps as a gated source; ps must not change while the cycle runs. The heap is
// built in buf's memory, and that memory is returned for the next cycle.
func (v *visits) gate(ps []Pending, pass func(Pending) bool, buf keyedHeap) keyedHeap {
	if len(ps) == 0 {
		return buf
	}
	g := &gated{heap: keyedHeap{items: buf.items[:0], slab: ps}, pass: pass}
	for i, p := range ps {
		g.heap.items = append(g.heap.items, heapItem{k: v.k.key(p), at: int32(i)})
	}
	g.heap.init()
	v.gates = append(v.gates, g)
	return keyedHeap{items: g.heap.items[:0]}
}

// keyedHeap is a min-heap of pending workloads by head key. Its items are keys with the
// workload's index in slab: a cycle moves thousands of them, and moving the workloads
// themselves (large, pointer-rich values) cost the garbage collector's write barrier on
// every swap. It is typed rather than a container/heap.Interface, which boxes every
// popped value.
type keyedHeap struct {
	items []heapItem
	slab  []Pending
}

type heapItem struct {
	k  headKey
	at int32
}

// len is the number of workloads in the heap.
func (h *keyedHeap) len() int { return len(h.items) }

// top is the least key; the heap must not be empty.
func (h *keyedHeap) top() *headKey { return &h.items[0].k }

func (h *keyedHeap) init() {
	for i := len(h.items)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}

// push adds p at key k.
func (h *keyedHeap) push(p Pending, k headKey) {
	h.slab = append(h.slab, p)
	h.items = append(h.items, heapItem{k: k, at: int32(len(h.slab) - 1)})
	h.up(len(h.items) - 1)
}

// emptied is h with no workloads, keeping its memory for the next cycle (the slab is
// cleared so that it keeps no workload alive).
func (h keyedHeap) emptied() keyedHeap {
	clear(h.slab)
	return keyedHeap{items: h.items[:0], slab: h.slab[:0]}
}

// pop removes and returns the workload with the least key.
func (h *keyedHeap) pop() Pending {
	top, last := h.items[0], len(h.items)-1
	h.items[0] = h.items[last]
	h.items = h.items[:last]
	h.down(0)
	return h.slab[top.at]
}

func (h *keyedHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.items[i].k.less(h.items[parent].k) {
			return
		}
		h.items[i], h.items[parent] = h.items[parent], h.items[i]
		i = parent
	}
}

func (h *keyedHeap) down(i int) {
	items := h.items
	for {
		least, l := i, 2*i+1
		if l < len(items) && items[l].k.less(items[least].k) {
			least = l
		}
		if r := l + 1; r < len(items) && items[r].k.less(items[least].k) {
			least = r
		}
		if least == i {
			return
		}
		items[i], items[least] = items[least], items[i]
		i = least
	}
}
