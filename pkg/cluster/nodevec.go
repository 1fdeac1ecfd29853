package cluster

// Node states live in fixed-size chunks so that a snapshot made from an overlay copies
// only the chunks the overlay wrote. A commit that binds a few pods on a fleet of 10,000
// nodes then copies a few hundred pointers instead of ten thousand, and the garbage
// collector has that much less to scan and to pass through its write barrier.
const (
	chunkBits = 6
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
)

type nodeChunk [chunkSize]*nodeState

// nodeVec is an immutable vector of node states; snapshots share its chunks.
type nodeVec struct {
	chunks []*nodeChunk
	n      int
}

func newNodeVec(states []*nodeState) nodeVec {
	v := nodeVec{chunks: make([]*nodeChunk, (len(states)+chunkMask)>>chunkBits), n: len(states)}
	for c := range v.chunks {
		v.chunks[c] = new(nodeChunk)
		copy(v.chunks[c][:], states[c<<chunkBits:])
	}
	return v
}

func (v nodeVec) len() int { return v.n }

func (v nodeVec) at(i int) *nodeState { return v.chunks[i>>chunkBits][i&chunkMask] }

// flat lists the states in order (a new slice: for builders that run once per node set).
func (v nodeVec) flat() []*nodeState {
	out := make([]*nodeState, 0, v.n)
	for _, c := range v.chunks {
		out = append(out, c[:min(chunkSize, v.n-len(out))]...)
	}
	return out
}

// with returns v with the states of the given indices replaced by state(i), copying
// only the chunks they fall in.
func (v nodeVec) with(indices []int32, state func(int) *nodeState) nodeVec {
	if len(indices) == 0 {
		return v
	}
	out := nodeVec{chunks: make([]*nodeChunk, len(v.chunks)), n: v.n}
	copy(out.chunks, v.chunks)
	for _, i := range indices {
		c := i >> chunkBits
		if out.chunks[c] == v.chunks[c] {
			cp := *v.chunks[c]
			out.chunks[c] = &cp
		}
		out.chunks[c][i&chunkMask] = state(int(i))
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
		return c[i&chunkMask]
	}
	return nil
}

// set records st as node i's private state (i not yet written).
func (o *overlayStates) set(i, total int, st *nodeState) {
	if o.chunks == nil {
		o.chunks = make([]*nodeChunk, (total+chunkMask)>>chunkBits)
	}
	c := o.chunks[i>>chunkBits]
	if c == nil {
		c = new(nodeChunk)
		o.chunks[i>>chunkBits] = c
	}
	c[i&chunkMask] = st
	o.touched = append(o.touched, int32(i))
}
