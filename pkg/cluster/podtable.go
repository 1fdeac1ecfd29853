package cluster

import "maps"

// podShards is how many parts the pod table is split into. A snapshot made from an
// overlay copies only the parts its changes touch: a commit binds and frees a few pods
// of the thousands bound, and copying the whole table per commit was a large part of a
// 10,000-node simulation. With 100,000 pods bound, 1,024 shards of about a hundred
// keep a commit's copies (it touches tens of shards) a fraction of what 256 cost.
const podShards = 1024

// podTable maps bound pods to their binding. Its shards are shared between snapshots
// until one is written (copy on write per shard), and the bindings are shared too:
// nothing is ever written through them.
type podTable struct {
	shards [podShards]map[PodRef]*BoundPod
	n      int
}

// shardOf spreads refs over the shards (FNV-1a over the ref's fields).
func shardOf(ref PodRef) int {
	h := uint32(2166136261)
	for i := 0; i < len(ref.Workload); i++ {
		h = (h ^ uint32(ref.Workload[i])) * 16777619
	}
	for i := 0; i < len(ref.PodSet); i++ {
		h = (h ^ uint32(ref.PodSet[i])) * 16777619
	}
	h = (h ^ uint32(ref.Index)) * 16777619
	return int(h % podShards)
}

func (t *podTable) get(ref PodRef) (*BoundPod, bool) {
	p, ok := t.shards[shardOf(ref)][ref]
	return p, ok
}

func (t *podTable) len() int { return t.n }

// each calls fn for every bound pod, in no particular order.
func (t *podTable) each(fn func(*BoundPod)) {
	for _, m := range t.shards {
		for _, p := range m {
			fn(p)
		}
	}
}

// with is t with changes applied (a nil binding removes the pod), sharing the shards
// the changes do not touch.
func (t *podTable) with(changes map[PodRef]*BoundPod) *podTable {
	next := &podTable{shards: t.shards, n: t.n}
	var copied [podShards / 64]uint64
	for ref, p := range changes {
		i := shardOf(ref)
		if copied[i/64]&(1<<(i%64)) == 0 {
			next.shards[i] = maps.Clone(t.shards[i])
			if next.shards[i] == nil {
				next.shards[i] = map[PodRef]*BoundPod{}
			}
			copied[i/64] |= 1 << (i % 64)
		}
		_, had := next.shards[i][ref]
		switch {
		case p == nil && had:
			delete(next.shards[i], ref)
			next.n--
		case p != nil:
			if !had {
				next.n++
			}
			next.shards[i][ref] = p
		}
	}
	return next
}
