package placement

import (
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// FitCache remembers the device model's answer per node state and GPU request shape.
// Between two decisions only the nodes that received pods change, and pod shapes repeat,
// so most Fit calls of a stream of pods are answered from here. Entries are keyed by the
// node's cluster.Stamp, so a changed node is never answered from a stale entry, and one
// cache may serve many overlays and snapshots in turn. The zero value is ready to use;
// a FitCache must not be used from several goroutines at once. The single-pod policies
// keep one each; pass one in Options.FitCache to share it across gang placements.
type FitCache struct {
	// byShape holds, per shape, one entry per node index (a slice, not a map: it is read
	// for every node a pod is tried on). A zero entry has no stamp and never matches; a
	// stamp from another overlay's node state never matches either.
	byShape map[fitKey][]fitEntry
	// slots and scores are the per-candidate buffers of the last chooser done with
	// them, lent to the next (placements run one at a time), so a placement over
	// thousands of candidates allocates them once per cache, not once per pod set.
	slots  []slot
	scores []int64
	// guess is predictWhole's scratch, lent with them (a chooser keeps no guess once
	// scored).
	guess []devices.Device
	// cand is newChooser's candidate set, kept for the next one.
	cand cluster.NodeSet
	// diags are the diagnosis memos by shape (diagnosis_memo.go).
	diags map[string]*diagMemo
	// verdicts are the verdict memos by shape (score_memo.go), several per shape when
	// queues score differently; nScoreMemos counts them.
	verdicts    map[string][]*scoreMemo
	nScoreMemos int
}

// lend hands c the cache's buffers (nil cache: fresh ones), with room for n candidates.
func (f *FitCache) lend(c *chooser, n int) {
	if f == nil {
		c.slots, c.scores = make([]slot, 0, n), make([]int64, 0, n)
		return
	}
	c.slots, c.scores = slices.Grow(f.slots[:0], n), slices.Grow(f.scores[:0], n)
	c.guess = f.guess[:0]
	f.slots, f.scores, f.guess = nil, nil, nil
}

// giveBack returns c's buffers for the next chooser; c must not be used afterwards.
func (f *FitCache) giveBack(c *chooser) {
	if f != nil {
		f.slots, f.scores, f.guess = c.slots, c.scores, c.guess
		c.slots, c.scores, c.guess = nil, nil, nil
	}
}

// fitKey is a GPU request in comparable form.
type fitKey struct {
	units, shared int64
	milli         resources.MilliGPU
	memory        resources.MiB
	mig, models   string
	perContainer  int64
	// filter is the DRA filter's key (devices.Request.FilterKey): claims with other
	// selectors or constraints are other shapes.
	filter string
}

type fitEntry struct {
	stamp   cluster.Stamp
	ok      bool
	assign  devices.Assignment
	refusal *devices.Refusal // why not, when !ok (a node without GPUs: nil)
}

// maxShapes bounds the cache: past it the cache starts over (a trace with ever new
// shapes gains nothing from it anyway).
const maxShapes = 256

func fitKeyOf(r devices.Request) fitKey {
	k := fitKey{units: r.Units, shared: r.Shared, milli: r.Milli, memory: r.Memory, perContainer: r.PerContainer, filter: r.FilterKey()}
	if len(r.MIG) > 0 {
		parts := make([]string, len(r.MIG))
		for i, m := range r.MIG {
			parts[i] = m.Profile + "=" + resources.Format("", resources.Amount(m.Count))
		}
		k.mig = strings.Join(parts, ",")
	}
	if len(r.ModelConstraint) > 0 {
		parts := make([]string, len(r.ModelConstraint))
		for i, m := range r.ModelConstraint {
			parts[i] = string(m)
		}
		k.models = strings.Join(parts, ",")
	}
	return k
}

// shape returns the per-node entries for one request shape, one per node of ov. Choose
// looks the shape up once and then reads the entries by node index.
func (c *FitCache) shape(ov *cluster.Overlay, key fitKey) []fitEntry {
	if c.byShape == nil || len(c.byShape) > maxShapes {
		c.byShape = map[fitKey][]fitEntry{}
	}
	nodes := c.byShape[key]
	if n := ov.NumNodes(); len(nodes) < n {
		nodes = append(nodes, make([]fitEntry, n-len(nodes))...)
		c.byShape[key] = nodes
	}
	return nodes
}

// fitAt answers the device part of pod p on node i, from e when node i has not changed
// since the same shape was last asked there, and records the answer in e otherwise.
func fitAt(e *fitEntry, ov *cluster.Overlay, i int, p *PodRequest) (devices.Assignment, bool) {
	refreshFit(e, ov, i, p)
	return e.assign, e.ok
}

// refreshFit brings e up to node i's current state.
func refreshFit(e *fitEntry, ov *cluster.Overlay, i int, p *PodRequest) {
	stamp := ov.Stamp(i)
	if e.stamp == stamp {
		return
	}
	*e = fitEntry{stamp: stamp}
	if d := ov.Devices(i); d != nil {
		e.assign, e.refusal = d.Fit(p.GPU)
		e.ok = e.refusal == nil
	}
}
