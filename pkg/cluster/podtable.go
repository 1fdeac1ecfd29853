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
// nothing is ever written through them. The shards sit in groups, also copied on write:
// a snapshot per commit copying 1,024 shard pointers was a tenth of what a fleet-size
// simulation allocated; now it copies the group pointers and the groups it touches.
type podTable struct {
	groups [podGroups]*shardGroup // nil: a group of empty shards
	n      int
}

// podGroups is how many groups of shardsPerGroup shards the table has.
const (
	podGroups      = 32
	shardsPerGroup = podShards / podGroups
)

type shardGroup struct {
	shards [shardsPerGroup]map[PodRef]*BoundPod
}

// shard is shard i's map (nil when empty).
func (t *podTable) shard(i int) map[PodRef]*BoundPod {
	g := t.groups[i/shardsPerGroup]
	if g == nil {
		return nil
	}
	return g.shards[i%shardsPerGroup]
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
	p, ok := t.shard(shardOf(ref))[ref]
	return p, ok
}

func (t *podTable) len() int { return t.n }

// each calls fn for every bound pod, in no particular order.
func (t *podTable) each(fn func(*BoundPod)) {
	for _, g := range t.groups {
		if g == nil {
			continue
		}
		for _, m := range g.shards {
			for _, p := range m {
				fn(p)
			}
		}
	}
}

// with is t with changes applied (a nil binding removes the pod), sharing the groups
// and shards the changes do not touch.
func (t *podTable) with(changes map[PodRef]*BoundPod) *podTable {
	next := &podTable{groups: t.groups, n: t.n}
	var copiedGroup uint32
	var copied [podShards / 64]uint64
	for ref, p := range changes {
		i := shardOf(ref)
		gi, si := i/shardsPerGroup, i%shardsPerGroup
		if copiedGroup&(1<<gi) == 0 {
			g := &shardGroup{}
			if old := t.groups[gi]; old != nil {
				*g = *old
			}
			next.groups[gi] = g
			copiedGroup |= 1 << gi
		}
		g := next.groups[gi]
		if copied[i/64]&(1<<(i%64)) == 0 {
			g.shards[si] = maps.Clone(t.shard(i))
			if g.shards[si] == nil {
				g.shards[si] = map[PodRef]*BoundPod{}
			}
			copied[i/64] |= 1 << (i % 64)
		}
		m := g.shards[si]
		_, had := m[ref]
		switch {
		case p == nil && had:
			delete(m, ref)
			next.n--
		case p != nil:
			if !had {
				next.n++
			}
			m[ref] = p
		}
	}
	return next
}
