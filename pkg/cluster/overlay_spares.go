package cluster

// Spares is memory an overlay that is done with hands to the next overlay of the same
// owner: its private node copies (with their free maps, pod lists and device
// accounting), its table of them, its pod overrides and its copies of the free index.
// A scheduler makes one overlay per cycle and writes thousands of nodes in it (every
// reservation walk releases running gangs): making those copies afresh each cycle was
// a tenth of what a fleet-size simulation allocated. The zero value is ready to use;
// a Spares belongs to one owner and is not safe for concurrent use.
type Spares struct {
	states []*nodeState
	chunks []*nodeChunk
	table  []*nodeChunk // an emptied chunk table (overlayStates.chunks)
	pods   map[PodRef]*BoundPod
	levels [][]uint64
}

// OverlayWith is Overlay, drawing on sp's memory for its writes (nil: Overlay). Hand
// the memory back with Recycle once the overlay is no longer used.
func (s *Snapshot) OverlayWith(sp *Spares) *Overlay { return &Overlay{base: s, spares: sp} }

// Recycle hands o's private memory to the Spares it was made with (nothing without
// one). o must not be used afterwards; snapshots made from it stay valid (they hold
// copies, never the overlay's own states).
func (o *Overlay) Recycle() {
	sp := o.spares
	if sp == nil {
		return
	}
	for _, i := range o.over.touched {
		sp.states = append(sp.states, o.over.get(int(i)))
	}
	for k, c := range o.over.chunks {
		if c != nil {
			clear(c.s[:])
			sp.chunks = append(sp.chunks, c)
			o.over.chunks[k] = nil
		}
	}
	if o.over.chunks != nil {
		sp.table = o.over.chunks
	}
	if o.pods != nil {
		clear(o.pods)
		sp.pods = o.pods
	}
	for _, l := range o.levels {
		if l != nil {
			sp.levels = append(sp.levels, l[:0])
		}
	}
	*o = Overlay{base: o.base}
}

// state is a node state to copy node st into for a write: a spare one when there is
// one, else a new copy.
func (sp *Spares) state(from *nodeState) *nodeState {
	if sp == nil || len(sp.states) == 0 {
		return from.cloneSpare(1)
	}
	st := sp.states[len(sp.states)-1]
	sp.states[len(sp.states)-1] = nil
	sp.states = sp.states[:len(sp.states)-1]
	from.copyInto(st)
	return st
}

// chunk is an empty chunk of private states.
func (sp *Spares) chunk() *nodeChunk {
	if sp == nil || len(sp.chunks) == 0 {
		return new(nodeChunk)
	}
	c := sp.chunks[len(sp.chunks)-1]
	sp.chunks = sp.chunks[:len(sp.chunks)-1]
	return c
}

// chunkTable is an empty table of n chunks.
func (sp *Spares) chunkTable(n int) []*nodeChunk {
	if sp == nil || len(sp.table) != n {
		return make([]*nodeChunk, n)
	}
	t := sp.table
	sp.table = nil
	return t
}

// podMap is an empty map of pod overrides.
func (sp *Spares) podMap() map[PodRef]*BoundPod {
	if sp == nil || sp.pods == nil {
		return map[PodRef]*BoundPod{}
	}
	m := sp.pods
	sp.pods = nil
	return m
}

// level is a copy of a level set of the free index.
func (sp *Spares) level(from []uint64) []uint64 {
	if sp == nil || len(sp.levels) == 0 {
		return append([]uint64(nil), from...)
	}
	l := sp.levels[len(sp.levels)-1]
	sp.levels = sp.levels[:len(sp.levels)-1]
	return append(l, from...)
}
