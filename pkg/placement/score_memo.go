package placement

import (
	"slices"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// A scheduler places a stream of workloads of a few shapes, and every placement builds a
// chooser that judges each candidate node: pre-filter, non-GPU check, device fit, score.
// Between two placements only the nodes that received or lost pods change, so most of
// those judgements repeat. scoreMemo keeps one shape's verdict per node under one set of
// scorers, with the node's stamp it was read under; a chooser judges again only the nodes
// whose stamp moved. The built-in scorers are pure functions of the node's state and the
// pod request (memoSafe), so a verdict read under an equal stamp (and shapes version) is
// the one a fresh judgement gives, and decisions do not change.

// verdictKind is what a judgement found.
type verdictKind uint8

const (
	// verdictFiltered: the numeric pre-filter rejects the node; it gets no slot.
	verdictFiltered verdictKind = iota
	// verdictUnfit: the node gets a slot that does not fit (non-GPU or device check).
	verdictUnfit
	// verdictPredicted: it fits, scored on a predicted whole-GPU pick (predictWhole);
	// no devices are recorded.
	verdictPredicted
	// verdictFits: it fits with the recorded devices and score.
	verdictFits
)

// verdict is one node's judgement for the chooser's pod.
type verdict struct {
	kind   verdictKind
	score  int64
	assign devices.Assignment
}

// memoEntry is a node's verdict with the version of the node it was read under, in
// its memo's lineage (version 0 matches no node). It keeps no devices: a fitting
// verdict's devices are the fit cache's answer for the same stamp, read again from
// there (see chooser.verdictAt). No pointers: the collector skips a memo's array.
type memoEntry struct {
	version uint64
	kind    verdictKind
	score   int64
}

// scoreMemo is one shape's verdicts, one entry per node, under its scorers (kept so
// that a lookup compares them, and so that nothing they point at is reused meanwhile).
type scoreMemo struct {
	scorers []WeightedScorer
	// version is the scorers' shapes version the verdicts were read under: the
	// fragmentation scorer's statistics change in place (ShapeStats.Reset), so equal
	// scorers do not mean equal scores.
	version int64
	// lin is the lineage the entries' node versions belong to.
	lin cluster.Lineage
	at  []memoEntry
}

// maxScoreMemos bounds the memos kept; past it they start over.
const maxScoreMemos = 128

// scoreMemoFor is the memo of req's shape under scorers, sized for ov; nil when the
// scorers are not all built-in ones (others may read more than the node's state).
func (c *FitCache) scoreMemoFor(ov *cluster.Overlay, req *PodRequest, scorers []WeightedScorer) *scoreMemo {
	if !memoSafe(scorers) {
		return nil
	}
	if c.verdicts == nil || c.nScoreMemos >= maxScoreMemos {
		c.verdicts, c.nScoreMemos = map[string][]*scoreMemo{}, 0
	}
	key := req.shapeKey()
	version := shapesVersion(scorers)
	for _, m := range c.verdicts[key] {
		if slices.Equal(m.scorers, scorers) {
			if len(m.at) != ov.NumNodes() {
				m.at, m.version, m.lin = make([]memoEntry, ov.NumNodes()), version, ov.Lineage()
			} else if m.version != version || m.lin != ov.Lineage() {
				// Version 0 matches no node: a cleared memo is a fresh one, without a new
				// array per shapes change (one a cycle at scale).
				clear(m.at)
				m.version, m.lin = version, ov.Lineage()
			}
			return m
		}
	}
	m := &scoreMemo{scorers: slices.Clone(scorers), version: version, lin: ov.Lineage(), at: make([]memoEntry, ov.NumNodes())}
	c.verdicts[key] = append(c.verdicts[key], m)
	c.nScoreMemos++
	return m
}

// shapeKey renders everything a node's verdict reads of the pod (the static checks, the
// requests, the GPU request), once per request.
func (p *PodRequest) shapeKey() string {
	if p.key == "" {
		// Built by hand: fmt rendered the request map through reflection, a few
		// percent of a fleet-size run (a request is made per placement).
		b := make([]byte, 0, 128)
		b = appendField(b, p.static)
		b = appendField(b, p.Requests.String())
		p.key = string(fitKeyOf(p.GPU).appendTo(b))
	}
	return p.key
}

// appendField appends s with its length first, so that no two lists of fields
// render alike whatever the fields hold.
func appendField(b []byte, s string) []byte {
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, ':')
	return append(b, s...)
}

// appendTo renders k after b, every field, numbers then length-prefixed strings.
func (k fitKey) appendTo(b []byte) []byte {
	for _, n := range [...]int64{k.units, k.shared, int64(k.milli), int64(k.memory), k.perContainer} {
		b = strconv.AppendInt(b, n, 10)
		b = append(b, ',')
	}
	for _, s := range [...]string{k.mig, k.models, k.filter} {
		b = appendField(b, s)
	}
	return b
}
