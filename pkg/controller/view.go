package controller

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/view"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ReadView reads what an operator sees of a running Gantry (view.Snapshot) from the
// API server, or from a cache behind c: queue objects, Workloads with the status the
// controller wrote, Nodes and Pods. It makes List calls only, so the controller can
// serve it over its cached client, and the CLI over a direct one.
func ReadView(ctx context.Context, c client.Reader) (view.Snapshot, error) {
	return ReadViewAt(ctx, c, time.Now())
}

// ReadViewAt is ReadView with the clock passed in: ETAs and waits count from now.
//
// The objects go through the controller's own reading path (stateCache, then
// buildState, as a scheduling pass reads them), so quota usage, borrowing, fair share
// and every device held are valued exactly as the scheduler values them. The reasons a
// workload waits are the ones the controller wrote on its status.
func ReadViewAt(ctx context.Context, c client.Reader, now time.Time) (view.Snapshot, error) {
	objs, err := listForView(ctx, c)
	if err != nil {
		return view.Snapshot{}, err
	}
	sc := newStateCache()
	sc.now = func() time.Time { return now }
	for _, o := range objs {
		sc.apply(o)
	}
	w := sc.snapshot()
	cs, err := buildState(w, ToAPIWorkload, nil)
	if err != nil {
		return view.Snapshot{}, fmt.Errorf("view: %w", err)
	}
	out := view.Snapshot{Source: "cluster", At: now}
	out.Queues = viewQueues(cs)
	out.Cohorts = view.CohortsOf(w.objs.Cohorts, out.Queues)
	out.Nodes = view.NodesOf(cs.cluster, func(n *cluster.Node) bool { return n.Ready && !n.Unschedulable })
	for _, t := range cs.byID {
		out.Workloads = append(out.Workloads, viewWorkload(t, w.podsOf(t.obj), now))
	}
	out.Sort()
	return out, nil
}

// viewList is one list ReadView reads, and whether the kind's CRD may be missing (a
// cluster without Cohorts or Topologies still has a view).
type viewList struct {
	list     func() client.ObjectList
	optional bool
}

// viewKinds are the lists ReadView reads.
func viewKinds() []viewList {
	return []viewList{
		{func() client.ObjectList { return &v1alpha1.ResourceFlavorList{} }, false},
		{func() client.ObjectList { return &v1alpha1.ClusterQueueList{} }, false},
		{func() client.ObjectList { return &v1alpha1.LocalQueueList{} }, false},
		{func() client.ObjectList { return &v1alpha1.WorkloadList{} }, false},
		{func() client.ObjectList { return &v1alpha1.CohortList{} }, true},
		{func() client.ObjectList { return &v1alpha1.WorkloadPriorityClassList{} }, true},
		{func() client.ObjectList { return &v1alpha1.TopologyList{} }, true},
		{func() client.ObjectList { return &schedulingv1.PriorityClassList{} }, false},
		{func() client.ObjectList { return &corev1.NamespaceList{} }, false},
		{func() client.ObjectList { return &corev1.NodeList{} }, false},
		{func() client.ObjectList { return &corev1.PodList{} }, false},
	}
}

// listForView lists every kind the view reads, as objects for the state cache.
func listForView(ctx context.Context, c client.Reader) ([]client.Object, error) {
	var out []client.Object
	for _, k := range viewKinds() {
		l := k.list()
		if err := c.List(ctx, l); err != nil {
			if k.optional && meta.IsNoMatchError(err) {
				continue
			}
			return nil, fmt.Errorf("view: list %T: %w", l, err)
		}
		items, err := meta.ExtractList(l)
		if err != nil {
			return nil, fmt.Errorf("view: list %T: %w", l, err)
		}
		for _, it := range items {
			if o, ok := it.(client.Object); ok {
				out = append(out, o)
			}
		}
	}
	kueue, err := listKueue(ctx, c) // kueuecrd.go: Kueue's queue objects, where installed
	return append(out, kueue...), err
}

// viewQueues are the ClusterQueues with the quota state a pass builds, counted as the
// controller counts them for their status.
func viewQueues(cs *cycleState) []view.Queue {
	counts, _ := countByQueue(cs)
	var out []view.Queue
	for _, name := range cs.quota.ClusterQueues() {
		cq, ok := cs.quota.ClusterQueue(name)
		if !ok {
			continue
		}
		q := view.QueueOf(cs.quota, cq)
		q.Pending, q.Admitted = int(counts[name].pending), int(counts[name].admitted)
		out = append(out, q)
	}
	return out
}

// viewWorkload is one Workload with its live pods: its size from the engine's model,
// where it stands and why from the status the controller wrote.
func viewWorkload(t *tracked, pods []*corev1.Pod, now time.Time) view.Workload {
	obj := t.obj
	st := &obj.Status
	w := view.Workload{ID: wlKey(obj), LocalQueue: obj.Spec.QueueName, ClusterQueue: t.cq, Phase: livePhase(obj, pods)}
	if st.Admission != nil {
		w.ClusterQueue = st.Admission.ClusterQueue
	}
	if o := obj.Spec.Owner; o != nil {
		w.Owner = o.Kind + "/" + o.Name
	}
	if t.model != nil {
		w.Priority = t.model.Priority
		w.Pods, w.GPU = view.WorkloadSize(t.model)
	}
	w.Preemptions = len(parseHistory(api.WorkloadID(w.ID), obj.Annotations[AnnotationPreemptionHistory]))
	if waiting(w.Phase) {
		setWhyWaiting(&w, obj, now)
	}
	if st.Admission != nil {
		w.Placements, w.Nodes = livePlacements(st.Admission.Placements, pods)
		if c := meta.FindStatusCondition(st.Conditions, v1alpha1.WorkloadAdmitted); c != nil && c.Status == "True" {
			w.Progress = max(0, now.Sub(c.LastTransitionTime.Time))
		}
	}
	return w
}

// setWhyWaiting copies why a waiting workload waits: layer, reason, details, remedy,
// position (1-based, as the simulator counts it) and ETA (from now).
func setWhyWaiting(w *view.Workload, obj *v1alpha1.Workload, now time.Time) {
	st := &obj.Status
	w.Layer, w.Reason, w.Remedy = st.Layer, st.Reason, st.Remedy
	w.Details = slices.Clone(st.Details)
	if st.Position != nil {
		w.Position = int(*st.Position) + 1
	}
	if st.ETA != nil {
		eta := max(0, st.ETA.Sub(now))
		w.ETA = &eta
		w.ETABasis = st.ETABasis
	}
	w.Waited = max(0, now.Sub(queuedAt(obj)))
}

// livePhase reads a Workload's phase from its status and pods: an admitted workload
// runs once one of its pods does; an evicted one waits again once tried.
func livePhase(obj *v1alpha1.Workload, pods []*corev1.Pod) view.Phase {
	switch obj.Status.State {
	case v1alpha1.StateFinished:
		return view.Finished
	case v1alpha1.StateEvicted:
		// The state stays Evicted while it waits again; once the scheduler has tried it
		// (a layer holds it) it is pending, as the simulator says.
		if obj.Status.Layer != "" {
			return view.Pending
		}
		return view.Evicted
	case v1alpha1.StateAdmitted:
		for _, p := range pods {
			if p.Status.Phase == corev1.PodRunning {
				return view.Running
			}
		}
		return view.Admitted
	case v1alpha1.StateQuotaReserved:
		return view.Pending // quota held, not placed: it waits for its admission checks
	}
	return view.Pending
}

// waiting reports whether a workload in phase p waits for admission.
func waiting(p view.Phase) bool { return p == view.Pending || p == view.Evicted }

// livePlacements converts an admission's placements, each named by the pod filling
// its slot (by its slot while there is none), and lists their distinct nodes sorted.
func livePlacements(ps []v1alpha1.PodPlacement, pods []*corev1.Pod) ([]view.Pod, []string) {
	bySlot := map[string]string{}
	for _, p := range pods {
		if slot := p.Annotations[AnnotationPodSlot]; slot != "" {
			bySlot[slot] = p.Name
		}
	}
	out := make([]view.Pod, 0, len(ps))
	var nodes []string
	for _, p := range ps {
		name := p.Pod
		if name == "" {
			name = bySlot[slotName(p)]
		}
		if name == "" {
			name = slotName(p)
		}
		out = append(out, view.Pod{Name: name, Node: p.Node, Devices: slices.Clone(p.Devices)})
		nodes = append(nodes, p.Node)
	}
	slices.Sort(nodes)
	return out, slices.Compact(nodes)
}
