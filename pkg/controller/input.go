package controller

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// tracked is one Workload object with its engine model and where it stands.
type tracked struct {
	obj   *v1alpha1.Workload
	model *api.Workload
	cq    string // ClusterQueue its LocalQueue points at ("" when it does not resolve)
	err   error  // the workload cannot be converted; reported on its status
	// checks are the admission checks its quota reservation waits for (provreq_gate.go);
	// checksDone: every one of them is Ready, so the workload is placed again like any
	// pending one, on the quota the cycle assigns.
	checks     []api.ClusterQueueCheck
	checksDone bool
	// charges: readable, admitted and not finished, so its pods are charged through its
	// admission; leaving: readable, neither admitted nor finished (evicted, its pods may
	// still terminate). Read once per workload for foreignPods, which asks per pod.
	charges, leaving bool
}

func (t *tracked) admitted() bool { return t.obj.Status.Admission != nil }
func (t *tracked) finished() bool {
	return meta.IsStatusConditionTrue(t.obj.Status.Conditions, v1alpha1.WorkloadFinished)
}
func (t *tracked) noticed() bool { return t.obj.Annotations[AnnotationPreemptionNotice] != "" }

// reservation is the quota a workload holds for its admission checks, nil when none
// (admitted and finished workloads hold none: an admission replaces it).
func (t *tracked) reservation() *v1alpha1.QuotaReservation {
	if t.admitted() || t.finished() {
		return nil
	}
	return t.obj.Status.QuotaReservation
}

// reservedWaiting: its quota is reserved and its checks are not all Ready; the quota
// is charged and the scheduler counts it as started, but nothing is placed.
func (t *tracked) reservedWaiting() bool { return t.reservation() != nil && !t.checksDone }

// started: the scheduler counts it as started (admitted, or holding a reservation).
func (t *tracked) started() bool { return t.admitted() || t.reservedWaiting() }

// startedAt is when it was admitted, or reserved its quota.
func (t *tracked) startedAt() time.Time {
	if r := t.reservation(); r != nil && !t.admitted() {
		return r.ReservedAt.Time
	}
	return admittedAt(t.obj)
}

// cycleState is one pass's picture for the engine's scheduler (its World) plus what
// the committer needs to map the plan back. The scheduler keeps the queues and
// everything decided in earlier cycles itself; this is only what the cluster shows now.
type cycleState struct {
	byID map[api.WorkloadID]*tracked
	// ordered are byID's keys in order, as buildState reads them (nil: sorted on use).
	ordered []api.WorkloadID
	quota   *admission.Quota // admitted usage as read; the cycle works on a clone
	// cluster holds the admitted workloads' planned pods and every other bound pod.
	cluster *cluster.Snapshot
	// running are the admitted workloads not under a notice, as the simulator's running
	// views: the noticed ones are leaving (inFlight). runningByID has every admitted one.
	running     []placement.Running
	runningByID map[api.WorkloadID]placement.Running
	// inFlight are the workloads leaving that the scheduler may not know as leaving:
	// noticed ones (a notice given before a restart, or a drain) and evicted ones whose
	// pods still terminate.
	inFlight map[api.WorkloadID]bool
	// occupants are the bound pods no admission accounts for (foreign pods, pods of
	// evicted workloads still terminating), by key: one gone frees capacity.
	occupants map[string]bool
	warnings  []string // state that could not be read (logged, never fatal)
	// checks are the admission checks read with the queue objects, flavors the
	// ResourceFlavors by name, and provReqs the ProvisioningRequests (provreq*.go).
	checks   api.AdmissionChecks
	flavors  map[string]api.ResourceFlavor
	provReqs map[string]provReqEntry
}

// put records t under id; buildState puts them in key order.
func (cs *cycleState) put(id api.WorkloadID, t *tracked) {
	if _, dup := cs.byID[id]; !dup {
		cs.ordered = append(cs.ordered, id)
	}
	cs.byID[id] = t
}

// keys are the workloads' IDs in order: as read (the workloads come in key order), or
// sorted for a state built by hand.
func (cs *cycleState) keys() []api.WorkloadID {
	if cs.ordered == nil || len(cs.ordered) != len(cs.byID) || !slices.IsSorted(cs.ordered) {
		return sortedKeys(cs.byID)
	}
	return cs.ordered
}

// modelOf converts a Workload object (priority resolved) into the engine's model; the
// feeder keeps the conversions between passes.
type modelOf func(obj *v1alpha1.Workload, priority int32) (*api.Workload, error)

// buildState reads the pass's world: the workloads, the admitted quota usage, the
// cluster with every bound pod, and the running and leaving workloads. layer keeps the
// admitted workloads laid out between passes (input_layer.go); nil lays them all out.
func buildState(w *world, convert modelOf, layer *admittedLayer) (*cycleState, error) {
	cs := &cycleState{byID: make(map[api.WorkloadID]*tracked, len(w.workloads)),
		inFlight: map[api.WorkloadID]bool{}, occupants: map[string]bool{}, warnings: append([]string(nil), w.warnings...),
		checks: w.objs.AdmissionChecks, flavors: flavorsByName(w.objs), provReqs: w.provReqs}
	if layer == nil {
		layer = newAdmittedLayer()
	}
	cqOf := localQueueTargets(w.objs)
	base, err := w.base.get(w.nodes, w.nodeGen, w.objs.Topologies)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	claims := readClaims(w, cs) // dra_state.go
	var live, kept []*tracked   // live: readable and not finished, in key order
	for i := range w.workloads {
		obj := &w.workloads[i]
		t := &tracked{obj: obj, cq: cqOf[obj.Namespace+"/"+obj.Spec.QueueName]}
		if t.finished() {
			cs.put(api.WorkloadID(wlKey(obj)), t)
			continue
		}
		t.model, t.err = convert(obj, w.priorities[obj.Spec.PriorityClassName])
		if t.err == nil {
			t.model, t.err = resolveWorkloadClaims(w, t.model) // dra_workload.go
		}
		if t.err != nil {
			// Not finished; a model that came with the error still counts as read.
			t.charges, t.leaving = t.model != nil && t.admitted(), t.model != nil && !t.admitted()
			cs.put(api.WorkloadID(wlKey(obj)), t)
			continue
		}
		cs.put(t.model.ID(), t)
		t.charges, t.leaving = t.admitted(), !t.admitted() // readable and not finished
		live = append(live, t)
		if t.admitted() && keepable(t) {
			kept = append(kept, t)
		}
	}
	if err := layer.lay(w, base, kept); err != nil {
		return nil, err
	}
	cs.running = make([]placement.Running, 0, len(kept))
	cs.runningByID = make(map[api.WorkloadID]placement.Running, len(kept))
	quota := layer.quota.Clone()
	var changes []cluster.Change
	var pending []allocating
	for _, t := range live {
		cs.readChecks(t, quota) // provreq_gate.go: a reservation's checks, and its quota
		if !t.admitted() {
			continue
		}
		if e, ok := layer.laid(t.model.ID()); ok { // else the pass lays it out itself
			cs.record(e.running, t.noticed())
			continue
		}
		plain, alloc := cs.addAdmitted(w, t, quota, claims.held)
		changes, pending = append(changes, plain...), append(pending, alloc...)
	}
	// Pods and claims with devices of their own go first (the layer's, then the pass's);
	// then the pods that allocate shared claims (their holders need the claims held
	// already, dra_state.go); the foreign pods, whose devices are picked from what is
	// free, last.
	ov := layer.snap.Overlay()
	assumeEach(ov, changes, &cs.warnings)
	assumeEach(ov, claims.changes, &cs.warnings)
	assumeAllocating(ov, w, pending, &cs.warnings)
	assumePicking(ov, foreignPods(w, cs), &cs.warnings)
	cs.cluster, cs.quota = ov.Seal(), quota
	return cs, nil
}

// addAdmitted charges an admitted workload's quota and records it as running (or
// leaving, under a notice); it returns its planned pods for the cluster: those bound
// as they are, and those naming shared claims not allocated yet (held are the
// allocated ones), which assumeAllocating binds.
func (cs *cycleState) addAdmitted(w *world, t *tracked, quota *admission.Quota, held map[string]heldClaim) ([]cluster.Change, []allocating) {
	pods, err := admittedPods(w, t, held)
	if err != nil {
		cs.warnings = append(cs.warnings, err.Error())
	}
	if err := quota.Admit(t.model, assignmentOf(t)); err != nil {
		cs.warnings = append(cs.warnings, err.Error())
	}
	cs.record(runningOf(w, t, pods), t.noticed())
	changes := make([]cluster.Change, 0, len(pods))
	var alloc []allocating
	for _, bp := range pods {
		if ps := modelPodSet(t.model, bp.Ref.PodSet); ps != nil && unheldShared(ps, t.model.Namespace, held) {
			alloc = append(alloc, allocating{w: t.model, ps: ps, pod: bp})
			continue
		}
		changes = append(changes, cluster.Change{Op: cluster.OpBind, Pod: bp})
	}
	return changes, alloc
}

// modelPodSet is m's pod set called name (nil: none).
func modelPodSet(m *api.Workload, name string) *api.PodSet {
	for i := range m.PodSets {
		if m.PodSets[i].Name == name {
			return &m.PodSets[i]
		}
	}
	return nil
}

// world is the scheduler's World at now.
func (cs *cycleState) world(now time.Time) engine.World {
	w := engine.World{Now: now, Cluster: cs.cluster, Quota: cs.quota, Running: cs.running, Checks: cs.gate()}
	for id := range cs.inFlight {
		w.InFlight = append(w.InFlight, id)
	}
	sort.Slice(w.InFlight, func(i, j int) bool { return w.InFlight[i] < w.InFlight[j] })
	return w
}

// pending are the models of the workloads waiting for admission, in key order.
func (cs *cycleState) pending() []engine.Pending {
	var out []engine.Pending
	for _, t := range cs.byID {
		if t.model != nil && !t.started() && !t.finished() {
			out = append(out, engine.Pending{Workload: t.model, ClusterQueue: t.cq})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Workload.ID() < out[j].Workload.ID() })
	return out
}

// assumeEach binds pods one by one so a single stale pod (say, on a node that left) is
// reported and skipped rather than failing the cycle.
func assumeEach(ov *cluster.Overlay, changes []cluster.Change, warnings *[]string) {
	for _, c := range changes {
		if err := ov.Assume(c.Pod.Ref, c.Pod.Node, c.Pod.Requests, c.Pod.Devices); err != nil {
			*warnings = append(*warnings, fmt.Sprintf("pod %s on %s: %v", c.Pod.Ref, c.Pod.Node, err))
		}
	}
}

// assumePicking is assumeEach for pods bound without devices of their own (foreign
// pods): each is given, as it is bound, the devices the device plugin would pick on
// what is free. Admitted pods are not picked for: they keep their placement's devices,
// even none (a pod of a gang sharing a claim may take nothing beyond the claim, which
// its holder holds).
func assumePicking(ov *cluster.Overlay, changes []cluster.Change, warnings *[]string) {
	for _, c := range changes {
		if c.Pod.Devices.IsZero() {
			c.Pod.Devices = pluginPick(ov, c.Pod)
		}
		assumeEach(ov, []cluster.Change{c}, warnings)
	}
}

// localQueueTargets maps "namespace/localqueue" to its ClusterQueue.
func localQueueTargets(objs *api.Objects) map[string]string {
	out := map[string]string{}
	for _, lq := range objs.LocalQueues {
		out[lq.Namespace+"/"+lq.Name] = lq.ClusterQueue
	}
	return out
}

// queuedAt is when the workload (re-)entered its queue: its last eviction, else creation.
func queuedAt(obj *v1alpha1.Workload) time.Time {
	if c := meta.FindStatusCondition(obj.Status.Conditions, v1alpha1.WorkloadEvicted); c != nil && c.Status == "True" {
		return c.LastTransitionTime.Time
	}
	return obj.CreationTimestamp.Time
}

// admittedPods are the planned pods of an admitted workload, charged to their nodes
// whether or not the real pods exist yet: the capacity is the workload's from admission.
// A pod's devices are its placement's less those of the allocated shared claims (held)
// it names: their holders hold them.
func admittedPods(w *world, t *tracked, held map[string]heldClaim) ([]cluster.BoundPod, error) {
	perPod := map[string]resources.Vector{}
	for _, ps := range t.model.PodSets {
		perPod[ps.Name] = ps.Requests
	}
	var out []cluster.BoundPod
	for _, p := range t.obj.Status.Admission.Placements {
		i, ok := w.nodeIndex[p.Node]
		if !ok {
			return out, fmt.Errorf("workload %s: placement on unknown node %s", t.model.ID(), p.Node)
		}
		ids := p.Devices
		if ps := modelPodSet(t.model, p.PodSet); ps != nil {
			ids = withoutHeld(ids, p.Node, ps, t.model.Namespace, held)
		}
		a, err := devices.AssignmentFromIDs(w.nodes[i].Devices, ids)
		if err != nil {
			return out, fmt.Errorf("workload %s: node %s: %w", t.model.ID(), p.Node, err)
		}
		out = append(out, cluster.BoundPod{
			Ref:  cluster.PodRef{Workload: t.model.ID(), PodSet: p.PodSet, Index: int(p.Index)},
			Node: p.Node, Requests: perPod[p.PodSet], Devices: a,
		})
	}
	return out, nil
}

// assignmentOf rebuilds the quota assignment recorded in an admitted workload's status.
func assignmentOf(t *tracked) admission.Assignment {
	return assignmentFrom(t.model.ID(), t.obj.Status.Admission.ClusterQueue, t.obj.Status.Admission.PodSetAssignments)
}

// assignmentFrom rebuilds a quota assignment from the pod set assignments a status
// records (an admission's or a reservation's).
func assignmentFrom(id api.WorkloadID, cq string, psas []v1alpha1.PodSetAssignment) admission.Assignment {
	a := admission.Assignment{Workload: id, ClusterQueue: cq, Mode: admission.Fit}
	for _, ps := range psas {
		usage, err := ResourceVector(ps.ResourceUsage, "status.admission.podSetAssignments.resourceUsage")
		if err != nil {
			continue
		}
		for _, r := range usage.Names() {
			fr := admission.FlavorResource{Flavor: ps.Flavors[corev1.ResourceName(r)], Resource: r}
			a.Usage = append(a.Usage, admission.FlavorAmount{FlavorResource: fr, Amount: usage[r]})
			if r == resources.GPUMilli {
				a.GPUMilli += resources.MilliGPU(usage[r])
			}
		}
	}
	return a
}

// runningOf is an admitted workload as preemption and reservations see it: started
// when admitted, ending by its maximum runtime, protected for its minimum runtime, on
// spot capacity when any of its nodes is.
func runningOf(w *world, t *tracked, pods []cluster.BoundPod) placement.Running {
	r := placement.Running{ID: t.model.ID(), Queue: t.obj.Status.Admission.ClusterQueue, Priority: t.model.Priority,
		Created: t.model.Created, MinRuntime: t.model.MinRuntime, Preemptible: true, CapacityType: api.CapacityOnDemand}
	r.StartedAt = admittedAt(t.obj)
	// The expected end, as the simulator dates it: the runtime the user expects
	// (gantry.dev/duration), else the most it may run (activeDeadlineSeconds).
	if run := cmp.Or(t.model.Timing.Duration, t.model.MaxRuntime); run > 0 && !r.StartedAt.IsZero() {
		r.ExpectedEnd = r.StartedAt.Add(run)
	}
	for _, p := range pods {
		r.Pods = append(r.Pods, p.Ref)
		for _, d := range p.Devices.Devices {
			r.GPUMilli += d.Milli
		}
		if i, ok := w.nodeIndex[p.Node]; ok && w.nodes[i].CapacityType == api.CapacitySpot {
			r.CapacityType = api.CapacitySpot
		}
	}
	return r
}

// admittedAt is when the workload's current run was admitted (zero when unknown).
func admittedAt(obj *v1alpha1.Workload) time.Time {
	if c := meta.FindStatusCondition(obj.Status.Conditions, v1alpha1.WorkloadAdmitted); c != nil && c.Status == metav1.ConditionTrue {
		return c.LastTransitionTime.Time
	}
	return time.Time{}
}

// pluginPick chooses devices for a pod bound without Gantry (or an evicted Gantry pod
// still terminating) the way the device plugin would: any free devices that fit.
func pluginPick(ov *cluster.Overlay, p cluster.BoundPod) devices.Assignment {
	i, ok := ov.NodeIndex(p.Node)
	if !ok || ov.Devices(i) == nil {
		return devices.Assignment{}
	}
	r, err := devices.ParseRequest(p.Requests)
	if err != nil || r.IsZero() {
		return devices.Assignment{}
	}
	a, _ := ov.Devices(i).Fit(r)
	return a
}
