package cluster

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Overlay is a what-if layer over a Snapshot: pods can be assumed on nodes and bound pods
// forgotten, and every step can be undone back to a Mark. The snapshot underneath never
// changes. A node's state is copied the first time the overlay writes to it (its
// NodeDevices are cloned then), so an overlay that touches few nodes costs little.
//
// An Overlay is not safe for concurrent use; create one per scheduling attempt.
type Overlay struct {
	base *Snapshot
	// over holds node i's private state once written; none means "as in base".
	over overlayStates
	// pods overrides base.pods: a non-nil entry is assumed, a nil entry is forgotten.
	pods    map[PodRef]*BoundPod
	journal []journalEntry
	// levels[l] is the overlay's own copy of the free index's level set l once it moved
	// a node in or out of it; nil entries read the base's (index.go).
	levels [][]uint64
	// freeGPU is how much the free milli-GPU of all nodes moved since base.
	freeGPU resources.MilliGPU
	// spares is the memory its writes draw on (OverlayWith); nil: fresh memory.
	spares *Spares
}

// journalEntry records one step so Undo can reverse it.
// The pod is shared, never written: undoing a removal puts the same record back
// instead of a copy (a reservation walk releases and restores thousands a cycle).
type journalEntry struct {
	op   ChangeOp
	node int32 // the pod's node index, so an undo does not look its name up
	pod  *BoundPod
}

// Mark is a position in an overlay's journal (see Overlay.Mark and Overlay.Undo).
type Mark int

// Base is the snapshot under the overlay.
func (o *Overlay) Base() *Snapshot { return o.base }

// NumNodes is the number of nodes.
func (o *Overlay) NumNodes() int { return o.base.nodes.len() }

// Node returns node i (read-only).
func (o *Overlay) Node(i int) *Node { return o.base.nodes.at(i).node }

// NodeIndex returns the index of the named node.
func (o *Overlay) NodeIndex(name string) (int, bool) { return o.base.NodeIndex(name) }

func (o *Overlay) state(i int) *nodeState {
	if st := o.over.get(i); st != nil && !st.restored {
		return st
	}
	return o.base.nodes.at(i)
}

// writable returns node i's private state, copying it on first write. A private state
// an undo restored is brought back to the base's content in place, reusing its
// buffers: a reservation walk releases and restores thousands of nodes a cycle, walk
// after walk.
func (o *Overlay) writable(i int) *nodeState {
	if st := o.over.get(i); st != nil {
		if st.restored {
			o.base.nodes.at(i).copyInto(st)
		}
		return st
	}
	st := o.spares.state(o.base.nodes.at(i))
	o.over.set(i, o.base.nodes.len(), st, o.spares)
	return st
}

// stepped counts a step on node i's private state (a bind or a release).
func (o *Overlay) stepped(i int) { o.over.get(i).steps++ }

// undone counts the undo of a step on node i: once every step since the state was
// copied is undone, the node holds the base's content again (up to the order of its
// pod list), and the overlay reads the base's state, stamp included: memos of the node
// stay valid, and Snapshot shares the base's state instead of copying it.
func (o *Overlay) undone(i int) {
	st := o.over.get(i)
	if st.steps--; st.steps == 0 {
		st.restored = true
	}
}

// Free returns node i's free non-GPU resources in the overlay (read-only).
func (o *Overlay) Free(i int) resources.Vector { return o.state(i).free }

// FreeCPUMemory is node i's free cpu (milli) and memory (bytes): Free without map
// look-ups, for pre-filters.
func (o *Overlay) FreeCPUMemory(i int) (cpu, memory resources.Amount) {
	st := o.state(i)
	return st.cpu, st.mem
}

// FreePods is node i's free pod slots and whether the node limits pods at all (a node
// without a pods limit takes any number): free[pods] without a map look-up.
func (o *Overlay) FreePods(i int) (free resources.Amount, limited bool) {
	st := o.state(i)
	return st.freePods, st.podsLimited
}

// AllocatableCPUMemory is node i's allocatable cpu (milli) and memory (bytes): the
// node's Allocatable without map look-ups, for scorers.
func (o *Overlay) AllocatableCPUMemory(i int) (cpu, memory resources.Amount) {
	st := o.state(i)
	return st.allocCPU, st.allocMem
}

// Devices returns node i's device accounting in the overlay (read-only: use Assume and
// Forget to change it; nil on nodes without GPUs).
func (o *Overlay) Devices(i int) *devices.NodeDevices { return o.state(i).devices }

// PodsOn returns the pods on node i in the overlay (read-only, and valid until the
// overlay next changes the node: a release removes from the list in place).
func (o *Overlay) PodsOn(i int) []PodRef { return o.state(i).pods }

// Touched reports whether the overlay has written node i.
func (o *Overlay) Touched(i int) bool {
	st := o.over.get(i)
	return st != nil && !st.restored
}

// Pod returns a pod bound or assumed in the overlay.
func (o *Overlay) Pod(ref PodRef) (BoundPod, bool) {
	if p, ok := o.pod(ref); ok {
		return *p, true
	}
	return BoundPod{}, false
}

// pod is Pod's shared record (read-only).
func (o *Overlay) pod(ref PodRef) (*BoundPod, bool) {
	if p, ok := o.pods[ref]; ok {
		return p, p != nil
	}
	return o.base.pods.get(ref)
}

// Stamp identifies the exact state of one node: two equal stamps mean the same node with
// the same pods and devices, so a result computed from that state (a device fit) can be
// reused. Every state a lineage of snapshots creates or writes gets a version the
// lineage never gave before, so a stamp holds no state alive: memos of thousands of
// stamps keep only numbers (and the lineage) from the collector.
type Stamp struct {
	lin     *lineage
	version uint64
}

// Stamp returns node i's current stamp.
func (o *Overlay) Stamp(i int) Stamp {
	return Stamp{lin: o.base.nodes.lin, version: o.state(i).version}
}

// Lineage identifies a family of snapshots: a snapshot built from nodes and every
// snapshot and overlay derived from it. Within one lineage a node's Version says what
// its Stamp says, so a memo of thousands of nodes can keep the lineage once and a
// number per node: an array without pointers, which the collector never scans and
// clears without write barriers.
type Lineage struct{ lin *lineage }

// Lineage is the overlay's lineage.
func (o *Overlay) Lineage() Lineage { return Lineage{lin: o.base.nodes.lin} }

// Version is node i's stamp within the overlay's Lineage: two equal versions of one
// lineage mean the same node state, as equal Stamps do. No state's version is 0.
func (o *Overlay) Version(i int) uint64 { return o.state(i).version }

// Mark returns the current journal position.
func (o *Overlay) Mark() Mark { return Mark(len(o.journal)) }

// Assume places pod on the named node with the given per-pod requests and device
// assignment. It fails, leaving the overlay unchanged, when the node is unknown, the pod
// is already present, the non-GPU requests exceed the node's free resources, or the
// devices are already in use.
func (o *Overlay) Assume(pod PodRef, node string, requests resources.Vector, a devices.Assignment) error {
	i, ok := o.base.byName[node]
	if !ok {
		return fmt.Errorf("pod %s: node %q: not in the snapshot", pod, node)
	}
	return o.AssumeAt(pod, i, requests, a)
}

// AssumeAt is Assume by node index (the placement hot path).
func (o *Overlay) AssumeAt(pod PodRef, i int, requests resources.Vector, a devices.Assignment) error {
	if _, exists := o.pod(pod); exists {
		return fmt.Errorf("pod %s: already bound or assumed", pod)
	}
	bp := &BoundPod{Ref: pod, Node: o.base.nodes.at(i).node.Name, Requests: requests, Devices: a}
	if err := o.add(i, bp); err != nil {
		return err
	}
	o.stepped(i)
	o.journal = append(o.journal, journalEntry{op: OpBind, node: int32(i), pod: bp})
	return nil
}

// Forget removes a bound or assumed pod, releasing its resources (a preemption what-if).
func (o *Overlay) Forget(pod PodRef) error {
	bp, ok := o.pod(pod)
	if !ok {
		return fmt.Errorf("pod %s: not bound", pod)
	}
	i, ok := o.base.byName[bp.Node]
	if !ok {
		return fmt.Errorf("pod %s: node %q: not in the snapshot", bp.Ref, bp.Node)
	}
	if err := o.remove(i, bp); err != nil {
		return err
	}
	o.stepped(i)
	o.journal = append(o.journal, journalEntry{op: OpRemove, node: int32(i), pod: bp})
	return nil
}

// Undo reverses every step after m, newest first.
func (o *Overlay) Undo(m Mark) {
	for len(o.journal) > int(m) && m >= 0 {
		e := o.journal[len(o.journal)-1]
		o.journal = o.journal[:len(o.journal)-1]
		// Reversing a step we just did cannot fail: the resources were free before it.
		if e.op == OpBind {
			_ = o.remove(int(e.node), e.pod)
		} else {
			_ = o.add(int(e.node), e.pod)
		}
		o.undone(int(e.node))
	}
}

// Changes returns the steps taken so far, in order: the list Snapshot.Apply replays.
func (o *Overlay) Changes() []Change { return o.ChangesSince(0) }

// ChangesSince returns the steps taken after mark m, in order (none for a mark outside
// the journal). Copying only the tail matters to callers that ask after every
// placement: the journal of a cycle's overlay grows long.
func (o *Overlay) ChangesSince(m Mark) []Change {
	if int(m) < 0 || int(m) > len(o.journal) {
		return nil
	}
	tail := o.journal[m:]
	out := make([]Change, len(tail))
	for k, e := range tail {
		out[k] = Change{Op: e.op, Pod: *e.pod}
	}
	return out
}

// Snapshot materialises the overlay as a new immutable snapshot. Untouched nodes are
// shared with the base; touched nodes are copied, so the overlay may keep being used.
func (o *Overlay) Snapshot() *Snapshot {
	return o.snapshot(func(i int) *nodeState { return o.over.get(i).clone() })
}

// Seal is Snapshot for an overlay its owner is done with: the new snapshot takes the
// overlay's private node states instead of copies of them. A committer binds a plan
// on an overlay and keeps only the snapshot; copying the states it had just written
// was a tenth of what a fleet-size burst allocated. o must not be used afterwards.
func (o *Overlay) Seal() *Snapshot {
	next := o.snapshot(func(i int) *nodeState {
		st := o.over.get(i)
		st.steps = 0 // a snapshot's states carry no overlay bookkeeping
		return st
	})
	*o = Overlay{} // any later use fails at once instead of writing into next
	return next
}

// snapshot builds the next snapshot with state(i) as touched node i's state.
func (o *Overlay) snapshot(state func(int) *nodeState) *Snapshot {
	touched := o.changedNodes()
	next := &Snapshot{
		nodes:      o.base.nodes.with(touched, state),
		byName:     o.base.byName,
		pods:       o.base.pods.with(o.pods), // copies only the shards the overlay changed
		topologies: o.base.topologies,
		domains:    o.base.domains,
		index:      o.snapshotIndex(),
		freeGPU:    o.FreeGPUMilli(),
		twins:      o.base.twins,
		static:     o.base.static, // same nodes, same static answers
	}
	ownTwins := false
	for _, i := range touched {
		if next.twins[i] >= 0 { // written: no longer known to be like its twins
			if !ownTwins {
				next.twins, ownTwins = slices.Clone(o.base.twins), true
			}
			next.twins[i] = -1
		}
	}
	return next
}

// changedNodes lists the nodes whose private state differs from the base (restored
// ones read the base).
func (o *Overlay) changedNodes() []int32 {
	out := make([]int32, 0, len(o.over.touched))
	for _, i := range o.over.touched {
		if !o.over.get(int(i)).restored {
			out = append(out, i)
		}
	}
	return out
}

// add charges bp to node i; on error nothing changed.
func (o *Overlay) add(i int, bp *BoundPod) error {
	cur := o.state(i)
	fits := true
	eachChargeLimited(cur.podsLimited, bp.Requests, func(k resources.Name, a resources.Amount) {
		if a > 0 && a > cur.free[k] {
			fits = false
		}
	})
	if !fits {
		return &ShortError{Pod: bp.Ref, Node: bp.Node, Use: chargeOn(cur.node, bp.Requests), Free: cur.free.Clone()}
	}
	hasDevices := !bp.Devices.IsZero()
	if hasDevices && cur.devices == nil {
		return fmt.Errorf("pod %s: node %s: devices %v assigned but the node has no GPUs", bp.Ref, bp.Node, bp.Devices.IDs())
	}
	st := o.writable(i)
	if hasDevices {
		before := st.gpuFreeTotal()
		if err := st.devices.Commit(bp.Devices); err != nil {
			return &PodError{Pod: bp.Ref, Node: bp.Node, Err: err}
		}
		o.freeGPU += st.gpuFreeTotal() - before
	}
	eachChargeLimited(st.podsLimited, bp.Requests, func(k resources.Name, a resources.Amount) { st.free[k] = resources.SatAdd(st.free[k], -a) })
	st.version = o.base.nodes.lin.next()
	st.mirrorFree()
	if hasDevices {
		o.refile(i, st, bp.Devices, true)
	}
	st.pods = append(st.pods, bp.Ref)
	o.setPod(bp.Ref, bp)
	return nil
}

// remove releases bp from its node, node i; on error nothing changed.
func (o *Overlay) remove(i int, bp *BoundPod) error {
	st := o.writable(i)
	if !bp.Devices.IsZero() && st.devices != nil {
		before := st.gpuFreeTotal()
		if err := st.devices.Release(bp.Devices); err != nil {
			return &PodError{Pod: bp.Ref, Node: bp.Node, Err: err}
		}
		o.freeGPU += st.gpuFreeTotal() - before
		o.refile(i, st, bp.Devices, false)
	}
	eachChargeLimited(st.podsLimited, bp.Requests, func(k resources.Name, a resources.Amount) { st.free[k] = resources.SatAdd(st.free[k], a) })
	st.version = o.base.nodes.lin.next()
	st.mirrorFree()
	for k, r := range st.pods {
		if r == bp.Ref {
			// In place: the array is the overlay's own (writable copied it), and keeping
			// its room lets the undo bind the pod again without growing it.
			st.pods = append(st.pods[:k], st.pods[k+1:]...)
			break
		}
	}
	o.setPod(bp.Ref, nil)
	return nil
}

// setPod records pod's overlay state (nil: absent). An assumed-then-undone pod that the
// base never had drops out of the map, so the overlay's map stays small.
func (o *Overlay) setPod(ref PodRef, p *BoundPod) {
	if p == nil {
		if _, inBase := o.base.pods.get(ref); !inBase { // looked up only for a removal
			delete(o.pods, ref)
			return
		}
	}
	if o.pods == nil {
		o.pods = o.spares.podMap()
	}
	o.pods[ref] = p
}

// chargeOn is the non-GPU part of requests charged on node n; the implicit pod slot is
// charged only on nodes that declare a pods limit.
func chargeOn(n *Node, requests resources.Vector) resources.Vector {
	use := NonGPU(requests)
	if _, ok := n.Allocatable[resources.Pods]; !ok {
		delete(use, resources.Pods)
	}
	return use
}

// eachCharge calls f with every amount of chargeOn(n, requests) without building the
// vector: assume, forget and undo run it on the hot path of placement and preemption.
func eachCharge(n *Node, requests resources.Vector, f func(resources.Name, resources.Amount)) {
	_, limited := n.Allocatable[resources.Pods]
	eachChargeLimited(limited, requests, f)
}

// eachChargeLimited is eachCharge on a node that declares a pods limit or not
// (nodeState.podsLimited: read once per node, not looked up at every step).
func eachChargeLimited(limited bool, requests resources.Vector, f func(resources.Name, resources.Amount)) {
	podsAsked := false
	for k, a := range requests {
		if k.IsGPU() || a == 0 {
			continue
		}
		if k == resources.Pods {
			podsAsked = true
			if !limited {
				continue
			}
		}
		f(k, a)
	}
	if !podsAsked && limited {
		f(resources.Pods, 1) // the implicit pod slot, as NonGPU adds it
	}
}
