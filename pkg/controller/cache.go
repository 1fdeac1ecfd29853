package controller

import (
	"maps"
	"sync"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// stateCache is the controller's picture of the cluster, kept current by the informer
// event handlers (see watcher) and by the controller's own writes (assumed Workloads).
// Work is done per event: a Node is converted when it changes, queue objects are
// converted again only after one of them changed, pods are indexed as they come. A pass
// takes a snapshot, which only copies. The lock is held per event and per snapshot.
type stateCache struct {
	mu        sync.Mutex
	queues    queueStore
	classes   map[string]int32 // pod PriorityClass values by name
	nodes     keyed[nodeEntry]
	nodeView  *nodeView // nil when a node changed since it was built
	nodeGen   uint64    // counts nodeView builds: a new one means some node changed
	base      baseSnapshots
	workloads workloadStore
	pods      podStore
	touched   *gangTouches // plain-pod gangs whose pods changed, for the gang maker
	dra       draStore
	now       func() time.Time // ages assumed Workloads

	// hyperNodes are Volcano's HyperNodes, whose tiers label the node view (hypernode.go).
	hyperNodes hyperNodeStore
	// provReqs are cluster-autoscaler's ProvisioningRequests (provreq_cache.go).
	provReqs keyed[provReqEntry]
}

func newStateCache() *stateCache {
	return &stateCache{classes: map[string]int32{}, pods: newPodStore(), touched: newGangTouches(), now: time.Now}
}

// apply records an added or updated object; kinds the cache does not keep are ignored.
// It reports whether a pass could decide differently now (see queueStore.update).
func (c *stateCache) apply(obj any) bool {
	o, ok := obj.(client.Object)
	if !ok {
		return true
	}
	if n, ok := o.(*corev1.Node); ok {
		c.putNode(n)
		return true
	}
	if u := c.updateDRA(o, false); u.ok {
		return true
	}
	if c.applyHyperNode(o, false) || c.applyProvReq(o, false) {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if changed, ok := c.queues.update(o, false); ok {
		return changed
	}
	switch o := o.(type) {
	case *schedulingv1.PriorityClass:
		c.classes[o.Name] = o.Value
	case *v1alpha1.Workload:
		c.workloads.observe(o)
	case *corev1.Pod:
		c.pods.put(o)
		c.touched.touch(o)
	}
	return true
}

// remove forgets a deleted object (or the last state of one whose deletion was
// missed); it reports whether a pass could decide differently now.
func (c *stateCache) remove(obj any) bool {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return true
	}
	if u := c.updateDRA(o, true); u.ok {
		return true
	}
	if c.applyHyperNode(o, true) || c.applyProvReq(o, true) {
		return true
	}
	key := objKey(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if changed, ok := c.queues.update(o, true); ok {
		return changed
	}
	switch o.(type) {
	case *schedulingv1.PriorityClass:
		delete(c.classes, key)
	case *corev1.Node:
		if c.nodes.del(key) {
			c.nodeView = nil
		}
	case *v1alpha1.Workload:
		c.workloads.forget(key)
	case *corev1.Pod:
		c.pods.del(key)
	}
	return true
}

// putNode converts n outside the lock (events of one informer come one at a time), and
// not at all when it is the version already converted (a resync).
func (c *stateCache) putNode(n *corev1.Node) {
	c.mu.Lock()
	old, ok := c.nodes.get(n.Name)
	c.mu.Unlock()
	if ok && n.ResourceVersion != "" && old.rv == n.ResourceVersion {
		return
	}
	c.mu.Lock()
	slices := c.dra.nodeSlices(n.Name)
	c.mu.Unlock()
	e := convertNode(n, slices)
	c.mu.Lock()
	c.nodes.put(n.Name, e)
	c.nodeView = nil
	c.mu.Unlock()
}

// assume records a Workload as this controller just wrote it (see workloadStore).
func (c *stateCache) assume(wl *v1alpha1.Workload) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.workloads.assume(wl, c.now())
}

// workload returns the caller's own shallow copy of the newest version of the Workload
// under key ("namespace/name"), or nil (see workloadStore.copies for the rules).
func (c *stateCache) workload(key string) *v1alpha1.Workload {
	c.mu.Lock()
	defer c.mu.Unlock()
	wl, ok := c.workloads.get(key)
	if !ok {
		return nil
	}
	cp := *wl
	return &cp
}

// queueObjects returns the ClusterQueues and LocalQueues in key order (shared:
// read-only), for their status.
func (c *stateCache) queueObjects() ([]*v1alpha1.ClusterQueue, []*v1alpha1.LocalQueue) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.queues.cqs.sorted(), c.queues.lqs.sorted()
}

// podsOnNode returns the pods bound to node in key order (shared: read-only).
func (c *stateCache) podsOnNode(node string) []*corev1.Pod {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pods.byNode[node]
}

// snapshot returns everything a pass reads, consistent as of one moment. Queue objects
// and nodes are converted here only if they changed since the last snapshot.
func (c *stateCache) snapshot() *world {
	c.mu.Lock()
	defer c.mu.Unlock()
	objs, problems := c.queues.current()
	if c.nodeView == nil {
		c.nodeView = c.hyperNodes.label(buildNodeView(&c.nodes))
		c.nodeGen++
	}
	nv := c.nodeView
	objs, hnWarnings := c.hyperNodes.withTopology(objs) // HyperNode tiers as a Topology, as the loader adds it
	c.workloads.expire(c.now())
	c.dra.observeNodes(nv.nodes, c.nodeGen) // allocationMode All is charged by the nodes' GPUs
	dv := c.dra.current()
	objs = c.dra.withClasses(objs, dv)
	return &world{dra: dv,
		objs: objs, nodes: nv.nodes, nodeIndex: nv.index, unhealthy: nv.unhealthy, nodeGen: c.nodeGen, base: &c.base,
		knownNodes: nv.known, notReady: nv.notReady,
		workloads:   c.workloads.copies(),
		pods:        c.pods.all.sortedShared(),
		podsByOwner: maps.Clone(c.pods.byOwner),
		boundPods:   &boundPods{loose: c.pods.loose.sortedShared(), slotted: maps.Clone(c.pods.slotted)},
		priorities:  priorities(objs, c.classes),
		provReqs:    c.provReqSnapshot(),
		warnings:    append(append(append([]string(nil), problems...), nv.warnings...), hnWarnings...),
	}
}

// priorities maps class names to values; a WorkloadPriorityClass wins over a pod
// PriorityClass of the same name.
func priorities(objs *api.Objects, classes map[string]int32) map[string]int32 {
	out := make(map[string]int32, len(objs.PriorityClasses)+len(classes))
	for _, pc := range objs.PriorityClasses {
		out[pc.Name] = pc.Value
	}
	for name, v := range classes {
		if _, wpc := out[name]; !wpc {
			out[name] = v
		}
	}
	return out
}
