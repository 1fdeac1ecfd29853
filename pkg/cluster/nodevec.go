package cluster

import "sync/atomic"

// Node states live in fixed-size chunks so that a snapshot made from an overlay copies
// only the chunks the overlay wrote. A commit that binds a few pods on a fleet of 10,000
// nodes then copies a few hundred pointers instead of ten thousand, and the garbage
// collector has that much less to scan and to pass through its write barrier.
const (
	chunkBits = 6
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

// nodeChunk is a block of node states with its generation: a chunk's states never
// change once it is in a snapshot, and a chunk with other states gets a new generation.
type nodeChunk struct {
	gen uint64
	s   [chunkSize]*nodeState
}

// lineage numbers the chunks of a snapshot and of every snapshot derived from it, and
// the versions of their node states (see Stamp): one counter, so no two are equal.
type lineage struct{ gens atomic.Uint64 }

// next is a number the lineage never gave before.
func (l *lineage) next() uint64 { return l.gens.Add(1) }

// nodeVec is an immutable vector of node states; snapshots share its chunks.
type nodeVec struct {
	chunks []*nodeChunk
	n      int
	lin    *lineage
}

// newNodeVec starts a lineage over states, which must be new: it numbers their versions.
func newNodeVec(states []*nodeState) nodeVec {
	v := nodeVec{chunks: make([]*nodeChunk, (len(states)+chunkMask)>>chunkBits), n: len(states), lin: &lineage{}}
	for _, st := range states {
		st.version = v.lin.next()
	}
	for c := range v.chunks {
		v.chunks[c] = &nodeChunk{gen: v.lin.next()}
		copy(v.chunks[c].s[:], states[c<<chunkBits:])
	}
	return v
}

func (v nodeVec) len() int { return v.n }

func (v nodeVec) at(i int) *nodeState { return v.chunks[i>>chunkBits].s[i&chunkMask] }

// flat lists the states in order (a new slice: for builders that run once per node set).
func (v nodeVec) flat() []*nodeState {
	out := make([]*nodeState, 0, v.n)
	for _, c := range v.chunks {
		out = append(out, c.s[:min(chunkSize, v.n-len(out))]...)
	}
	return out
}

// with returns v with the states of the given indices replaced by state(i), copying
// only the chunks they fall in.
func (v nodeVec) with(indices []int32, state func(int) *nodeState) nodeVec {
	if len(indices) == 0 {
		return v
	}
	out := nodeVec{chunks: make([]*nodeChunk, len(v.chunks)), n: v.n, lin: v.lin}
	copy(out.chunks, v.chunks)
	for _, i := range indices {
		c := i >> chunkBits
		if out.chunks[c] == v.chunks[c] {
			cp := *v.chunks[c]
			cp.gen = v.lin.next()
			out.chunks[c] = &cp
		}
		out.chunks[c].s[i&chunkMask] = state(int(i))
	}
	return out
}

// overlayStates is an overlay's private node states, allocated chunk by chunk on first
// write, with the indices written in the order they were first written.
type overlayStates struct {
	chunks  []*nodeChunk
	touched []int32
}

// get is node i's private state, nil when the overlay has not written it.
func (o *overlayStates) get(i int) *nodeState {
	if o.chunks == nil {
		return nil
	}
	if c := o.chunks[i>>chunkBits]; c != nil {
		return c.s[i&chunkMask]
	}
	return nil
}

// set records st as node i's private state (i not yet written).
func (o *overlayStates) set(i, total int, st *nodeState, sp *Spares) {
	if o.chunks == nil {
		o.chunks = sp.chunkTable((total + chunkMask) >> chunkBits)
	}
	c := o.chunks[i>>chunkBits]
	if c == nil {
		c = sp.chunk()
		o.chunks[i>>chunkBits] = c
	}
	c.s[i&chunkMask] = st
	o.touched = append(o.touched, int32(i))
}

// BlockSize is how many nodes (by index) share a block: block b holds nodes
// b*BlockSize up to the next block.
const BlockSize = chunkSize

// BlockStamp identifies the states of a block's nodes: two equal stamps mean the same
// states, so per-node answers computed from one hold for the other. It holds no states
// (a memo of stamps keeps no old snapshot alive). The zero stamp matches no block's.
type BlockStamp struct {
	lin *lineage
	gen uint64
}

// Blocks is the number of node blocks.
func (o *Overlay) Blocks() int { return len(o.base.nodes.chunks) }

// BlockStamp is block b's stamp as the overlay reads it; ok is false when the overlay
// has written a node of the block (those states are its own and change as it works).
func (o *Overlay) BlockStamp(b int) (stamp BlockStamp, ok bool) {
	if o.over.chunks != nil && o.over.chunks[b] != nil {
		return BlockStamp{}, false
	}
	return BlockStamp{lin: o.base.nodes.lin, gen: o.base.nodes.chunks[b].gen}, true
}
