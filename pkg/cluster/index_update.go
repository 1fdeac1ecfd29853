package cluster

import "github.com/gantry-sched/gantry/pkg/devices"

// Keeping the free index current: every assume, forget and undo that changes a node's
// devices refiles that node in the overlay's own copies of the level sets it leaves and
// enters, and a snapshot made from the overlay takes copies of those.

// refile recounts node i after assignment a was taken (took) or given back on it, and
// moves it between level sets.
func (o *Overlay) refile(i int, st *nodeState, a devices.Assignment, took bool) {
	g := st.groups
	if g == nil {
		return
	}
	var buf [8]int32
	counts := buf[:0]
	if len(g.ids) > len(buf) {
		counts = make([]int32, len(g.ids))
	}
	counts = append(counts[:0], st.counts...)
	if g.plain || !g.shift(st, a, took, counts) {
		g.freeCounts(st, counts)
	} else {
		g.wholeCounts(st, counts)
	}
	for k, gid := range g.ids {
		was, now := level(st.counts[k]), level(counts[k])
		st.counts[k] = counts[k]
		if was == now {
			continue
		}
		if was > 0 {
			s := NodeSet{words: o.ownLevel(int(gid)*maxLevel + was - 1)}
			s.remove(i)
		}
		if now > 0 {
			s := NodeSet{words: o.ownLevel(int(gid)*maxLevel + now - 1)}
			s.add(i)
		}
	}
}

// ownLevel returns the overlay's private copy of a level set, copying the base's on
// first use.
func (o *Overlay) ownLevel(l int) []uint64 {
	if o.levels == nil {
		o.levels = make([][]uint64, len(o.base.index.levels))
	}
	if o.levels[l] == nil {
		o.levels[l] = o.spares.level(o.base.index.levels[l])
	}
	return o.levels[l]
}

// level returns level set l as the overlay sees it.
func (o *Overlay) level(l int) []uint64 {
	if o.levels != nil && o.levels[l] != nil {
		return o.levels[l]
	}
	return o.base.index.levels[l]
}

// snapshotIndex is the index of a snapshot made from the overlay: the base's level
// sets, with copies of those the overlay changed (the overlay may keep writing its own).
func (o *Overlay) snapshotIndex() *freeIndex {
	idx := o.base.index
	if o.levels == nil {
		return idx
	}
	out := &freeIndex{keys: idx.keys, levels: make([][]uint64, len(idx.levels))}
	for l := range idx.levels {
		if o.levels[l] != nil {
			out.levels[l] = append([]uint64(nil), o.levels[l]...)
		} else {
			out.levels[l] = idx.levels[l]
		}
	}
	return out
}
