package controller

import (
	"fmt"
	"math/rand"
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
)

// tracked is one Workload object with its engine model and where it stands.
type tracked struct {
	obj   *v1alpha1.Workload
	model *api.Workload
	cq    string // ClusterQueue its LocalQueue points at ("" when it does not resolve)
	err   error  // the workload cannot be converted; reported on its status
}

func (t *tracked) admitted() bool { return t.obj.Status.Admission != nil }
func (t *tracked) finished() bool {
	return meta.IsStatusConditionTrue(t.obj.Status.Conditions, v1alpha1.WorkloadFinished)
}
func (t *tracked) noticed() bool { return t.obj.Annotations[AnnotationPreemptionNotice] != "" }

// cycleState is the engine's input plus what the committer needs to map the plan back.
type cycleState struct {
	in       engine.Input
	byID     map[api.WorkloadID]*tracked
	quota    *admission.Quota // admitted usage as read; the engine works on a clone
	flavors  []api.ResourceFlavor
	warnings []string // state that could not be read (logged, never fatal)
}

// buildInput turns the world into the engine's input for one cycle.
func buildInput(w *world, now time.Time, cycleNo int64, rng *rand.Rand) (*cycleState, error) {
	cs := &cycleState{byID: map[api.WorkloadID]*tracked{}, flavors: w.objs.Flavors, warnings: append([]string(nil), w.warnings...)}
	cqOf := localQueueTargets(w.objs)
	strategy := map[string]api.QueueingStrategy{}
	for _, cq := range w.objs.ClusterQueues {
		strategy[cq.Name] = cq.QueueingStrategy
	}
	quota, err := admission.NewQuota(w.objs, admission.Options{})
	if err != nil {
		return nil, fmt.Errorf("quota: %w", err)
	}
	snap, err := cluster.NewSnapshot(w.nodes, w.objs.Topologies)
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	cs.in = engine.Input{Cycle: cycleNo, Now: now, Rand: rng, InFlight: map[api.WorkloadID]bool{},
		Nominated: map[api.WorkloadID][]api.WorkloadID{}, PreemptedBy: map[api.WorkloadID]api.WorkloadID{}}
	var changes []cluster.Change
	for i := range w.workloads {
		obj := &w.workloads[i]
		t := &tracked{obj: obj, cq: cqOf[obj.Namespace+"/"+obj.Spec.QueueName]}
		t.model, t.err = ToAPIWorkload(obj, w.priorities[obj.Spec.PriorityClassName])
		if t.err != nil || t.finished() {
			cs.byID[api.WorkloadID(wlKey(obj))] = t
			continue
		}
		cs.byID[t.model.ID()] = t
		if by := obj.Annotations[AnnotationPreemptedBy]; by != "" {
			cs.in.PreemptedBy[t.model.ID()] = api.WorkloadID(by)
		}
		if !t.admitted() {
			if rec := parseNominated(obj.Annotations[AnnotationNominatedVictims]); len(rec) > 0 {
				cs.addNominated(t.model.ID(), rec...)
			}
			cs.in.Pending = append(cs.in.Pending, engine.Pending{Workload: t.model, ClusterQueue: t.cq,
				Strategy: strategy[t.cq], QueuedAt: queuedAt(obj), Runtime: t.model.MaxRuntime})
			continue
		}
		pods, err := admittedPods(w, t)
		if err != nil {
			cs.warnings = append(cs.warnings, err.Error())
		}
		for _, bp := range pods {
			changes = append(changes, cluster.Change{Op: cluster.OpBind, Pod: bp})
		}
		if err := quota.Admit(t.model, assignmentOf(t)); err != nil {
			cs.warnings = append(cs.warnings, err.Error())
		}
		if t.noticed() {
			cs.in.InFlight[t.model.ID()] = true
			if by := api.WorkloadID(obj.Annotations[AnnotationPreemptedBy]); by != "" {
				cs.addNominated(by, t.model.ID())
			}
		}
		cs.in.Running = append(cs.in.Running, runningOf(t, pods))
	}
	changes = append(changes, foreignPods(w, cs)...)
	if cs.in.Cluster, err = applyEach(snap, changes, &cs.warnings); err != nil {
		return nil, err
	}
	cs.quota = quota
	cs.in.Quota = engine.NewAdmissionQuota(quota.Clone(), nil)
	return cs, nil
}

// addNominated adds victims to preemptor's Nominated list, each once. The list is the
// preemptor's own record (AnnotationNominatedVictims, as the simulator's nominated
// list) joined with the victims still leaving that name it in their preempted-by
// annotation (so a lost record write still makes it wait for them).
func (cs *cycleState) addNominated(preemptor api.WorkloadID, victims ...api.WorkloadID) {
	list := cs.in.Nominated[preemptor]
	for _, v := range victims {
		list = appendUnique(list, v)
	}
	cs.in.Nominated[preemptor] = list
}

// applyEach binds pods one by one so a single stale pod (say, on a node that left) is
// reported and skipped rather than failing the cycle.
func applyEach(snap *cluster.Snapshot, changes []cluster.Change, warnings *[]string) (*cluster.Snapshot, error) {
	ov := snap.Overlay()
	for _, c := range changes {
		if c.Pod.Devices.IsZero() {
			c.Pod.Devices = pluginPick(ov, c.Pod)
		}
		if err := ov.Assume(c.Pod.Ref, c.Pod.Node, c.Pod.Requests, c.Pod.Devices); err != nil {
			*warnings = append(*warnings, fmt.Sprintf("pod %s on %s: %v", c.Pod.Ref, c.Pod.Node, err))
		}
	}
	return ov.Snapshot(), nil
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
func admittedPods(w *world, t *tracked) ([]cluster.BoundPod, error) {
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
		a, err := devices.AssignmentFromIDs(w.nodes[i].Devices, p.Devices)
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
	a := admission.Assignment{Workload: t.model.ID(), ClusterQueue: t.obj.Status.Admission.ClusterQueue, Mode: admission.Fit}
	for _, ps := range t.obj.Status.Admission.PodSetAssignments {
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

// runningOf is an admitted workload as preemption and reservations see it.
func runningOf(t *tracked, pods []cluster.BoundPod) placement.Running {
	r := placement.Running{ID: t.model.ID(), Queue: t.obj.Status.Admission.ClusterQueue, Priority: t.model.Priority,
		Created: t.model.Created, MinRuntime: t.model.MinRuntime, Preemptible: true, CapacityType: api.CapacityOnDemand}
	if c := meta.FindStatusCondition(t.obj.Status.Conditions, v1alpha1.WorkloadAdmitted); c != nil {
		r.StartedAt = c.LastTransitionTime.Time
	}
	if t.model.MaxRuntime > 0 && !r.StartedAt.IsZero() {
		r.ExpectedEnd = r.StartedAt.Add(t.model.MaxRuntime)
	}
	for _, p := range pods {
		r.Pods = append(r.Pods, p.Ref)
		for _, d := range p.Devices.Devices {
			r.GPUMilli += d.Milli
		}
	}
	return r
}

// foreignPods are bound, live pods Gantry did not place: they use capacity too. Their
// GPUs are picked the way the device plugin would, on the node's free devices.
func foreignPods(w *world, cs *cycleState) []cluster.Change {
	var out []cluster.Change
	for _, p := range w.pods {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		if t := cs.byID[api.WorkloadID(p.Annotations[AnnotationWorkload])]; t != nil && p.DeletionTimestamp == nil &&
			t.model != nil && t.admitted() && !t.finished() && p.Annotations[AnnotationPodSlot] != "" {
			continue // charged through its workload's admission
		}
		if t := cs.byID[api.WorkloadID(p.Annotations[AnnotationWorkload])]; t != nil && t.model != nil && !t.admitted() && !t.finished() {
			// Evicted, its pods still terminating: it is still leaving, so its preemptor
			// keeps waiting for it and its preemptor's other victims stay held (in the
			// simulator an eviction frees the room at once).
			cs.in.InFlight[t.model.ID()] = true
		}
		req, err := ResourceVector(PodRequests(&p.Spec), "spec")
		if err != nil {
			cs.warnings = append(cs.warnings, fmt.Sprintf("pod %s/%s: %v", p.Namespace, p.Name, err))
			continue
		}
		ref := cluster.PodRef{Workload: api.WorkloadID("pod:" + p.Namespace + "/" + p.Name), PodSet: "pod"}
		out = append(out, cluster.Change{Op: cluster.OpBind, Pod: cluster.BoundPod{Ref: ref, Node: p.Spec.NodeName, Requests: req}})
	}
	return out
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
