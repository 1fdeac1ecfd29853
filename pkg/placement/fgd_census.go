package placement

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// ShapeCensus is the engine's live workload for the fragmentation scorer: the pods of
// every workload the scheduler knows and has not seen finish (pending, running or
// leaving), and the GPUs of the current nodes. Fill turns it into a ShapeStats built in
// a canonical order, so the statistics are a function of what is live now, not of the
// order things arrived in: a scheduler rebuilt after a restart, which knows exactly the
// unfinished workloads, scores every node as the one it replaced did.
type ShapeCensus struct {
	pods map[string]*censusPods
	// keys are the pods' keys sorted, nil when a key came or went since.
	keys  []string
	nodes []censusNodes
	// token identifies the node set counted (the snapshot's node identity).
	token cluster.NodesToken
	dirty bool
	// groups are the nodes merged by the labels that places read (groupedBy, their
	// keys), so a Fill observes a few node groups, not every node.
	groups    []censusNodes
	groupedBy string
	// seen is each GPU node of the last node set counted: its label map and GPUs. A
	// driver that builds a new snapshot every pass from unchanged nodes (the controller)
	// then costs one comparison per node, not a regrouping and a rebuild.
	seen []seenNode
}

// seenNode identifies a node by its label map (shared, read-only, between snapshots of
// unchanged nodes) and its GPU count.
type seenNode struct {
	labels unsafe.Pointer
	gpus   int
}

// censusPods is one pod shape (requests and place) with its live pod count.
type censusPods struct {
	requests resources.Vector
	parsed   devices.Request
	valid    bool // the requests parse (others are not observed, as in Observe)
	place    []labelReq
	count    int64
}

// censusNodes is one node label set with the GPUs of the nodes that carry it.
type censusNodes struct {
	key    string
	labels map[string]string
	gpus   int
}

// NewShapeCensus returns an empty census.
func NewShapeCensus() *ShapeCensus { return &ShapeCensus{pods: map[string]*censusPods{}} }

// Add counts the pods of w's pod sets as live.
func (c *ShapeCensus) Add(w *api.Workload) { c.count(w, 1) }

// Remove forgets the pods of w's pod sets (w finished or was deleted).
func (c *ShapeCensus) Remove(w *api.Workload) { c.count(w, -1) }

func (c *ShapeCensus) count(w *api.Workload, sign int64) {
	for k := range w.PodSets {
		ps := &w.PodSets[k]
		if ps.Count <= 0 {
			continue
		}
		place := placeOf(ps)
		key := censusKey(ps.Requests, place)
		e := c.pods[key]
		if e == nil {
			if sign < 0 {
				continue
			}
			r, err := devices.ParseRequest(ps.Requests)
			e = &censusPods{requests: ps.Requests, parsed: r, valid: err == nil, place: place}
			c.pods[key], c.keys = e, nil
		}
		e.count += sign * int64(ps.Count)
		if e.count <= 0 {
			delete(c.pods, key)
			c.keys = nil
		}
		c.dirty = true
	}
}

// censusKey renders a pod shape canonically: requests sorted by name, then the place.
func censusKey(r resources.Vector, place []labelReq) string {
	names := make([]string, 0, len(r))
	for n := range r {
		names = append(names, string(n))
	}
	slices.Sort(names)
	var b strings.Builder
	for _, n := range names {
		b.WriteString(n)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(int64(r[resources.Name(n)]), 10))
		b.WriteByte(',')
	}
	b.WriteByte('@')
	b.WriteString(renderPlace(place))
	return b.String()
}

// Nodes counts the GPUs of snap's nodes by label set, once per node set.
func (c *ShapeCensus) Nodes(snap *cluster.Snapshot) {
	if snap == nil || snap.NodesToken() == c.token {
		return
	}
	c.token = snap.NodesToken()
	if c.sameNodes(snap) {
		return
	}
	byKey := map[string]int{}
	c.nodes = c.nodes[:0]
	for i := range snap.NumNodes() {
		n := snap.Node(i)
		g := n.GPUCount()
		if g <= 0 {
			continue
		}
		key := labelsKey(n.Labels)
		if k, ok := byKey[key]; ok {
			c.nodes[k].gpus += g
			continue
		}
		byKey[key] = len(c.nodes)
		c.nodes = append(c.nodes, censusNodes{key: key, labels: n.Labels, gpus: g})
	}
	slices.SortFunc(c.nodes, func(a, b censusNodes) int { return strings.Compare(a.key, b.key) })
	c.dirty, c.groups, c.groupedBy = true, nil, ""
}

// sameNodes reports whether snap's GPU nodes are those last counted, and records them.
func (c *ShapeCensus) sameNodes(snap *cluster.Snapshot) bool {
	same, k := true, 0
	for i := range snap.NumNodes() {
		n := snap.Node(i)
		g := n.GPUCount()
		if g <= 0 {
			continue
		}
		sn := seenNode{labels: reflect.ValueOf(n.Labels).UnsafePointer(), gpus: g}
		if k < len(c.seen) && c.seen[k] == sn {
			k++
			continue
		}
		same = false
		c.seen = append(c.seen[:k], sn)
		k++
	}
	same = same && k == len(c.seen) && k > 0
	c.seen = c.seen[:k]
	return same
}

// nodeGroups merges the nodes whose labels agree on every key some place reads: they
// meet the same places, so the statistics see them as one node with their GPUs.
func (c *ShapeCensus) nodeGroups() []censusNodes {
	var keys []string
	for _, e := range c.pods {
		for _, r := range e.place {
			keys = append(keys, r.key)
		}
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	sig := strings.Join(keys, "\x00")
	if c.groups != nil && sig == c.groupedBy {
		return c.groups
	}
	byKey := map[string]int{}
	groups := []censusNodes{}
	for _, n := range c.nodes {
		labels := make(map[string]string, len(keys))
		for _, k := range keys {
			if v, ok := n.labels[k]; ok {
				labels[k] = v
			}
		}
		key := labelsKey(labels)
		if k, ok := byKey[key]; ok {
			groups[k].gpus += n.gpus
			continue
		}
		byKey[key] = len(groups)
		groups = append(groups, censusNodes{key: key, labels: labels, gpus: n.gpus})
	}
	slices.SortFunc(groups, func(a, b censusNodes) int { return strings.Compare(a.key, b.key) })
	c.groups, c.groupedBy = groups, sig
	return groups
}

// labelsKey renders a label set canonically.
func labelsKey(labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(labels[k])
		b.WriteByte(';')
	}
	return b.String()
}

// Fill rebuilds s from the census when anything changed since the last Fill: pod
// shapes in key order (which numbers the places), then the node groups. It reports
// whether s changed.
func (c *ShapeCensus) Fill(s *ShapeStats) bool {
	if !c.dirty {
		return false
	}
	c.dirty = false
	s.Reset()
	if c.keys == nil {
		c.keys = make([]string, 0, len(c.pods))
		for k := range c.pods {
			c.keys = append(c.keys, k)
		}
		slices.Sort(c.keys)
	}
	for _, k := range c.keys {
		if e := c.pods[k]; e.valid {
			s.observeParsed(e.parsed, e.requests, e.place, e.count)
		}
	}
	for _, n := range c.nodeGroups() {
		s.ObserveNode(n.labels, n.gpus)
	}
	return true
}
