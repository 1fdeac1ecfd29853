package cluster

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// nodeState is one node's state inside a snapshot: the node, its free non-GPU resources,
// its device accounting and the pods bound to it. A nodeState reachable from a Snapshot is
// never mutated; overlays copy it on first write.
type nodeState struct {
	node    *Node
	free    resources.Vector
	devices *devices.NodeDevices // nil on nodes without GPUs
	pods    []PodRef
	// gpuPos maps a GPU index to its position in NodeDevices.GPUs() (shared, never
	// written).
	gpuPos map[int]int
	mode   devices.SharingMode
	devCap resources.Vector // what the devices offer in total (shared, never written)
	// cpu and mem mirror free[cpu] and free[memory] for the placement hot path;
	// allocCPU and allocMem are the node's allocatable cpu and memory (never change).
	cpu, mem           resources.Amount
	allocCPU, allocMem resources.Amount
	// freePods mirrors free[pods]; podsLimited: the node declares a pods limit.
	freePods    resources.Amount
	podsLimited bool
	// version is the lineage's number for this content: a write takes a new one, a
	// copy keeps it (see Stamp).
	version uint64
	// groups is how the free index files the node (shared, never written; nil without
	// GPUs) and counts its current free count per group (see index.go).
	groups *nodeGroups
	counts []int32
	// countBuf holds a clone's counts when they fit, so cloning a node for a write
	// allocates nothing more for the index.
	countBuf [4]int32
	model    devices.ModelID // the GPUs' one model, "" when they mix (shared, never written)
	// steps and restored are an overlay's bookkeeping of its private copy (zero in a
	// snapshot): steps taken on the node since the copy and not undone, and whether
	// they all were undone, so that the overlay reads the base again (overlay.go).
	steps    int32
	restored bool
}

// clone copies s with its version: a copy holds the same state until it is written (a
// commit's copies keep the memos of their nodes valid; see Stamp).
func (s *nodeState) clone() *nodeState { return s.cloneSpare(0) }

// cloneSpare is clone with room for spare more pods: an overlay's private copy is made
// to bind or release a pod, and binding one would otherwise copy the list again.
func (s *nodeState) cloneSpare(spare int) *nodeState {
	out := &nodeState{node: s.node, version: s.version, free: s.free.Clone(), pods: append(make([]PodRef, 0, len(s.pods)+spare), s.pods...),
		gpuPos: s.gpuPos, mode: s.mode, devCap: s.devCap, cpu: s.cpu, mem: s.mem, allocCPU: s.allocCPU, allocMem: s.allocMem, freePods: s.freePods, podsLimited: s.podsLimited,
		groups: s.groups, model: s.model}
	if len(s.counts) <= len(out.countBuf) {
		out.counts = out.countBuf[:len(s.counts):len(s.counts)]
		copy(out.counts, s.counts)
	} else {
		out.counts = append([]int32(nil), s.counts...)
	}
	if s.devices != nil {
		out.devices = s.devices.Clone()
	}
	return out
}

// copyInto makes out a copy of s for an overlay's write, as cloneSpare does, reusing
// out's buffers (its free map, pod list, device accounting) where they fit.
func (s *nodeState) copyInto(out *nodeState) {
	free, pods, devs := out.free, out.pods, out.devices
	clear(free)
	for k, a := range s.free {
		free[k] = a
	}
	*out = nodeState{node: s.node, version: s.version, free: free, pods: append(pods[:0], s.pods...),
		gpuPos: s.gpuPos, mode: s.mode, devCap: s.devCap, cpu: s.cpu, mem: s.mem, allocCPU: s.allocCPU, allocMem: s.allocMem, freePods: s.freePods, podsLimited: s.podsLimited,
		groups: s.groups, model: s.model}
	if len(s.counts) <= len(out.countBuf) {
		out.counts = out.countBuf[:len(s.counts):len(s.counts)]
		copy(out.counts, s.counts)
	} else {
		out.counts = append([]int32(nil), s.counts...)
	}
	if s.devices != nil && (devs == nil || !devs.CopyFrom(s.devices)) {
		devs = s.devices.Clone()
	}
	if s.devices == nil {
		devs = nil
	}
	out.devices = devs
}

// Snapshot is an immutable view of the cluster: nodes in name order, the pods bound to
// them, and the topology domains. Every method is read-only; the next snapshot is made
// with Apply (pod changes), WithNode or WithoutNode (node changes), or from an Overlay
// with Overlay.Snapshot. Untouched nodes are shared between snapshots, so a new snapshot
// costs O(nodes) pointers plus the touched nodes.
//
// Node indices (0..NumNodes()-1, in name order) are stable within one snapshot and its
// overlays; they are the cheap handle the placement hot path uses.
type Snapshot struct {
	nodes      nodeVec
	byName     map[string]int
	pods       *podTable          // shared between snapshots, shard by shard
	freeGPU    resources.MilliGPU // over every node (FreeGPUMilli)
	topologies []Topology
	domains    map[string][]Domain // level label key -> domains, see topology.go
	index      *freeIndex          // free units per node (index.go)
	twins      []int32             // per node: its class of twins, -1 for none (twins.go)
	static     *staticMemo         // node sets that depend on the nodes alone (static.go)
}

// NewSnapshot builds a snapshot of nodes with no pods bound. Node names must be unique
// and non-empty; each topology must have levels. The nodes' Devices are cloned, so the
// caller's values stay untouched.
func NewSnapshot(nodes []Node, topologies []api.Topology) (*Snapshot, error) {
	s := &Snapshot{byName: make(map[string]int, len(nodes)), pods: &podTable{}}
	sorted := make([]*Node, len(nodes))
	for i := range nodes {
		n := nodes[i]
		sorted[i] = &n
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	resolve := map[devices.ModelID]devices.ModelID{} // GPU model names, looked up once
	gpus := make([][]devices.GPU, len(sorted))
	empty := make([]bool, len(sorted))
	states := make([]*nodeState, 0, len(sorted))
	for i, n := range sorted {
		if n.Name == "" {
			return nil, fmt.Errorf("node #%d (%s): metadata.name: must not be empty", i, n.Source)
		}
		if _, dup := s.byName[n.Name]; dup {
			return nil, fmt.Errorf("node %q (%s): metadata.name: duplicate node name", n.Name, n.Source)
		}
		s.byName[n.Name] = i
		var st *nodeState
		st, gpus[i] = newNodeState(n, resolve)
		empty[i] = nothingHeld(st, gpus[i])
		states = append(states, st)
		s.freeGPU += st.gpuFreeTotal()
	}
	topos, err := normaliseTopologies(topologies)
	if err != nil {
		return nil, err
	}
	s.topologies = topos
	s.nodes = newNodeVec(states)
	s.domains = buildDomains(states, topos)
	s.index = buildIndex(states, gpus, empty)
	s.twins = buildTwins(states, gpus, empty)
	s.static = &staticMemo{}
	return s, nil
}

// newNodeState is node n's state with nothing bound, and its GPUs (NodeDevices.GPUs);
// resolve caches model look-ups.
func newNodeState(n *Node, resolve map[devices.ModelID]devices.ModelID) (*nodeState, []devices.GPU) {
	st := &nodeState{node: n, free: n.Allocatable.Clone()}
	var gpus []devices.GPU
	if st.free == nil {
		st.free = resources.Vector{}
	}
	st.mirrorFree()
	_, st.podsLimited = n.Allocatable[resources.Pods]
	st.allocCPU, st.allocMem = n.Allocatable[resources.CPU], n.Allocatable[resources.Memory]
	if n.Devices != nil {
		st.devices = n.Devices.Clone()
		gpus = n.Devices.GPUs()
		st.gpuPos = gpuPositions(gpus)
		st.mode = gpuMode(gpus)
		st.model = nodeModel(gpus, resolve)
		st.devCap = n.Devices.Capacity()
	}
	return st, gpus
}

// mirrorFree copies the free amounts the placement hot path reads out of the free map.
func (s *nodeState) mirrorFree() {
	s.cpu, s.mem, s.freePods = s.free[resources.CPU], s.free[resources.Memory], s.free[resources.Pods]
}

// NumNodes is the number of nodes.
func (s *Snapshot) NumNodes() int { return s.nodes.len() }

// Node returns node i (read-only).
func (s *Snapshot) Node(i int) *Node { return s.nodes.at(i).node }

// NodeIndex returns the index of the named node.
func (s *Snapshot) NodeIndex(name string) (int, bool) {
	i, ok := s.byName[name]
	return i, ok
}

// Free returns node i's free non-GPU resources (read-only: do not modify).
func (s *Snapshot) Free(i int) resources.Vector { return s.nodes.at(i).free }

// Devices returns node i's device accounting (read-only: do not modify; nil without GPUs).
func (s *Snapshot) Devices(i int) *devices.NodeDevices { return s.nodes.at(i).devices }

// PodsOn returns the pods bound on node i, in bind order (read-only).
func (s *Snapshot) PodsOn(i int) []PodRef { return s.nodes.at(i).pods }

// Pod returns a bound pod.
func (s *Snapshot) Pod(ref PodRef) (BoundPod, bool) {
	if p, ok := s.pods.get(ref); ok {
		return *p, true
	}
	return BoundPod{}, false
}

// Pods returns every bound pod, sorted by workload, pod set and index.
func (s *Snapshot) Pods() []BoundPod {
	out := make([]BoundPod, 0, s.pods.len())
	s.pods.each(func(p *BoundPod) { out = append(out, *p) })
	sort.Slice(out, func(i, j int) bool { return out[i].Ref.less(out[j].Ref) })
	return out
}

// Overlay starts a what-if layer over the snapshot. It is cheap: nothing is copied until
// a node is first written.
func (s *Snapshot) Overlay() *Overlay { return &Overlay{base: s} }

// Apply returns the snapshot that results from applying changes in order. The receiver is
// unchanged. A change that cannot be applied (unknown node, pod already bound, devices
// already in use, not enough free resources, removing an unknown pod) is an error naming
// the pod, and no snapshot is returned.
func (s *Snapshot) Apply(changes []Change) (*Snapshot, error) {
	ov := s.Overlay()
	if err := ov.ApplyGroup(changes); err != nil {
		return nil, err
	}
	return ov.Seal(), nil
}

// ApplyGroup applies changes in order on the overlay, all or nothing: on the first one
// that cannot be applied the group is undone and that error returned. Committers apply
// a plan workload by workload this way on one overlay and build one snapshot at the
// end, instead of a snapshot (a copy of every node and pod) per workload.
func (o *Overlay) ApplyGroup(changes []Change) error {
	mark := o.Mark()
	for _, c := range changes {
		var err error
		switch c.Op {
		case OpBind:
			err = o.Assume(c.Pod.Ref, c.Pod.Node, c.Pod.Requests, c.Pod.Devices)
		case OpRemove:
			err = o.Forget(c.Pod.Ref)
		default:
			err = fmt.Errorf("pod %s: change op %v: unknown operation", c.Pod.Ref, c.Op)
		}
		if err != nil {
			o.Undo(mark)
			return err
		}
	}
	return nil
}

// WithNode returns a snapshot in which node n is added or replaces the node of the same
// name (e.g. a node failed, recovered or was re-partitioned). Pods bound on a replaced
// node are re-bound on the new node with the same devices; if one no longer fits, that is
// an error naming the pod, so the caller removes such pods first.
func (s *Snapshot) WithNode(n Node) (*Snapshot, error) {
	if n.Name == "" {
		return nil, fmt.Errorf("node (%s): metadata.name: must not be empty", n.Source)
	}
	nodes := make([]Node, 0, s.nodes.len()+1)
	for _, st := range s.nodes.flat() {
		if st.node.Name != n.Name {
			nodes = append(nodes, *st.node)
		}
	}
	nodes = append(nodes, n)
	return s.rebuild(nodes)
}

// WithoutNode returns a snapshot without the named node. Pods still bound on it are an
// error: the caller evicts them first (with Apply), so no pod silently disappears.
func (s *Snapshot) WithoutNode(name string) (*Snapshot, error) {
	i, ok := s.byName[name]
	if !ok {
		return nil, fmt.Errorf("node %q: not in the snapshot", name)
	}
	if pods := s.nodes.at(i).pods; len(pods) > 0 {
		return nil, fmt.Errorf("node %q: %d pods still bound (first %s); remove them first", name, len(pods), pods[0])
	}
	nodes := make([]Node, 0, s.nodes.len())
	for _, st := range s.nodes.flat() {
		if st.node.Name != name {
			nodes = append(nodes, *st.node)
		}
	}
	return s.rebuild(nodes)
}

// rebuild makes a fresh snapshot of nodes with the same topologies and re-binds every pod.
func (s *Snapshot) rebuild(nodes []Node) (*Snapshot, error) {
	topos := make([]api.Topology, 0, len(s.topologies))
	for _, t := range s.topologies {
		levels := t.Levels
		if t.ImplicitHostname {
			levels = levels[:len(levels)-1]
		}
		topos = append(topos, api.Topology{Meta: api.Meta{Name: t.Name}, Levels: levels})
	}
	next, err := NewSnapshot(nodes, topos)
	if err != nil {
		return nil, err
	}
	pods := s.Pods()
	changes := make([]Change, 0, len(pods))
	for _, p := range pods {
		changes = append(changes, Change{Op: OpBind, Pod: p})
	}
	return next.Apply(changes)
}
