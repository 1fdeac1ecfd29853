package placement

import (
	"slices"

	"github.com/gantry-sched/gantry/pkg/cluster"
)

// A full diagnosis checks every node of the fleet, and at 10,000 nodes a scheduler
// diagnoses the same few shapes cycle after cycle while only the nodes its commits
// touched changed. diagMemo keeps one shape's answer per node (fits, or the key of its
// first rejection and how many it has) with the stamps of the nodes and of their blocks
// the answers were read from; a diagnosis re-checks only the nodes whose stamp moved,
// looking for them only in the blocks whose stamp moved. Each reason's
// example and the nearest miss are checked again on their node, so the result is the
// one a full scan gives.
type diagMemo struct {
	// stamps are the blocks' stamps as read; the zero stamp (a block the overlay had
	// written, or none read yet) matches no block.
	stamps []cluster.BlockStamp
	// nodes are the nodes' versions as read, in lineage lin (0: none read): inside a
	// block that moved, only the nodes whose own version moved are checked again (a
	// commit touches a few nodes of a block, and a cycle's overlay writes a few more).
	lin    cluster.Lineage
	nodes  []uint64
	first  []uint16 // per node: 0 fits, else 1 + the index in keys of its first rejection
	count  []uint16 // per node: how many rejections it has (saturating)
	keys   []tallyKey
	keyIdx map[tallyKey]uint16
}

// maxDiagMemos bounds the memos kept (past it they start over), and maxDiagKeys the
// distinct first reasons one memo numbers.
const (
	maxDiagMemos = 64
	maxDiagKeys  = 1 << 12
)

// diagMemoFor is the memo of req's shape, sized for ov (a new one when the cluster's
// size changed or the memo numbered too many reasons).
func (c *FitCache) diagMemoFor(ov *cluster.Overlay, req *PodRequest) *diagMemo {
	key := req.shapeKey()
	if c.diags == nil || len(c.diags) > maxDiagMemos {
		c.diags = map[string]*diagMemo{}
	}
	m := c.diags[key]
	if m == nil || len(m.first) != ov.NumNodes() || len(m.stamps) != ov.Blocks() || len(m.keys) > maxDiagKeys {
		m = &diagMemo{stamps: make([]cluster.BlockStamp, ov.Blocks()), lin: ov.Lineage(), nodes: make([]uint64, ov.NumNodes()),
			first: make([]uint16, ov.NumNodes()), count: make([]uint16, ov.NumNodes()), keyIdx: map[tallyKey]uint16{}}
		c.diags[key] = m
	}
	if m.lin != ov.Lineage() { // another lineage's versions say nothing here
		clear(m.nodes)
		m.lin = ov.Lineage()
	}
	return m
}

// record files node i's rejections.
func (m *diagMemo) record(i int, rej []Rejection) {
	if len(rej) == 0 {
		m.first[i], m.count[i] = 0, 0
		return
	}
	k := tallyKeyOf(rej[0])
	idx, ok := m.keyIdx[k]
	if !ok {
		m.keys = append(m.keys, k)
		idx = uint16(len(m.keys))
		m.keyIdx[k] = idx
	}
	m.first[i], m.count[i] = idx, uint16(min(len(rej), 1<<16-1))
}

// diagnoseAll is diagnose over every node with the memo m: the nodes whose stamp moved
// (looked for only in blocks whose stamp moved) are checked again, then the counts are
// read off the memo.
func (p *setPlacer) diagnoseAll(d *Diagnosis, m *diagMemo) {
	n := p.ov.NumNodes()
	fits := p.fitsFor()
	static := staticSet(p.ov, p.req)
	var scratch []Rejection
	for b := range p.ov.Blocks() {
		stamp, ok := p.ov.BlockStamp(b)
		if ok && m.stamps[b] == stamp {
			continue
		}
		for i := b * cluster.BlockSize; i < min(n, (b+1)*cluster.BlockSize); i++ {
			if ver := p.ov.Version(i); m.nodes[i] != ver {
				scratch = p.rejectionsAt(i, static, fits, scratch[:0])
				m.record(i, scratch)
				m.nodes[i] = ver
			}
		}
		m.stamps[b] = stamp // zero when !ok
	}
	nodes := make([]int, len(m.keys)+1)   // per key: nodes it is first on
	firstAt := make([]int, len(m.keys)+1) // per key: the first such node
	near := -1
	for i := range n {
		k := m.first[i]
		if k == 0 {
			d.FitNodes++
			continue
		}
		if nodes[k] == 0 {
			firstAt[k] = i
		}
		nodes[k]++
		if near < 0 || m.count[i] < m.count[near] {
			near = i
		}
	}
	for k := 1; k < len(nodes); k++ {
		if nodes[k] > 0 {
			ex := p.rejectionsAt(firstAt[k], static, fits, scratch[:0])[0]
			d.Counts = append(d.Counts, ReasonCount{Key: ex.Key(), Example: ex, Nodes: nodes[k]})
		}
	}
	sortCounts(d.Counts)
	if near >= 0 {
		d.NearMiss = &NearMiss{Node: p.ov.Node(near).Name, Rejections: slices.Clone(p.rejectionsAt(near, static, fits, scratch[:0]))}
	}
}
