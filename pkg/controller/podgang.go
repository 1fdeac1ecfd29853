package controller

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/manifest"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	kerrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Plain pods become one gang (one Workload) through either
//   - Gantry's annotations gantry.dev/gang=<name> and gantry.dev/gang-size=<pods>, or
//   - Volcano's scheduling.k8s.io/group-name=<podgroup> annotation, the size being the
//     minMember of that scheduling.volcano.sh/v1beta1 PodGroup.
const (
	AnnotationGang        = "gantry.dev/gang"
	AnnotationGangSize    = "gantry.dev/gang-size"
	AnnotationVolcanoGang = "scheduling.k8s.io/group-name"

	// KindPodGang and KindPodGroup are the owner kinds of gang Workloads.
	KindPodGang  = "PodGang"
	KindPodGroup = "PodGroup"
)

// podGroupGVK is Volcano's PodGroup, read through unstructured when installed.
var podGroupGVK = schema.GroupVersionKind{Group: "scheduling.volcano.sh", Version: "v1beta1", Kind: "PodGroup"}

// optionalKinds are the kinds watched only when their CRDs are installed.
func optionalKinds() []schema.GroupVersionKind {
	out := []schema.GroupVersionKind{podGroupGVK}
	for _, k := range jobKinds() {
		// A kind's related kinds (a TrainJob's runtimes) are watched beside it, so a
		// change to one wakes a pass.
		out = append(append(out, k.GVK), k.Related...)
	}
	// Serving kinds (serving.go): apps/v1 is always served, LeaderWorkerSet only with
	// its CRD; all are read as unstructured objects like the optional job kinds.
	for _, k := range servingKinds() {
		out = append(out, k.GVK)
	}
	return out
}

// gangOf names the gang a Gantry pod belongs to: owner kind and gang name, or "" when
// the pod is not in one. Besides plain-pod gangs, a serving object's pods are gangs of
// their Workload (servingGangOf), so the pod store indexes them where podsOf looks.
func gangOf(p *corev1.Pod) (kind, name string) {
	if p.Spec.SchedulerName != SchedulerName {
		return "", ""
	}
	if g := p.Annotations[AnnotationGang]; g != "" {
		return KindPodGang, g
	}
	if g := p.Annotations[AnnotationVolcanoGang]; g != "" {
		return KindPodGroup, g
	}
	return servingGangOf(p)
}

// podGang is the pods of one gang, sorted by name.
type podGang struct {
	ns, kind, name string
	live, done     []*corev1.Pod
	failed         bool
}

// groupPodGangs gathers gang pods by namespace, kind and name, in a stable order.
func groupPodGangs(pods []*corev1.Pod) []*podGang {
	byKey := map[string]*podGang{}
	for _, p := range pods {
		kind, name := gangOf(p)
		if kind != KindPodGang && kind != KindPodGroup {
			continue // not a plain-pod gang: a serving object's Workload is made from the object
		}
		key := p.Namespace + "/" + kind + "/" + name
		g := byKey[key]
		if g == nil {
			g = &podGang{ns: p.Namespace, kind: kind, name: name}
			byKey[key] = g
		}
		switch {
		case p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed:
			g.done = append(g.done, p)
			g.failed = g.failed || p.Status.Phase == corev1.PodFailed
		case p.DeletionTimestamp == nil:
			g.live = append(g.live, p)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]*podGang, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// WorkloadNameForGang is the Workload name of a pod gang (of any kind gangOf gives).
func WorkloadNameForGang(kind, name string) string {
	switch kind {
	case KindPodGroup:
		return "podgroup-" + name
	case KindPodGang:
		return "gang-" + name
	}
	return WorkloadNameFor(kind, name) // a serving gang (serving.go)
}

// syncPodGangs creates the Workload of each complete pod gang and finishes it when all
// its pods have ended, and reports whether it wrote any. A gang waits, without a
// Workload, until all its pods exist.
func (ctl *Controller) syncPodGangs(ctx context.Context, wls workloadLookup, pods []*corev1.Pod, now time.Time) (wrote bool) {
	for _, g := range groupPodGangs(pods) {
		wl := wls(g.ns + "/" + WorkloadNameForGang(g.kind, g.name))
		if wl != nil {
			if len(g.live) == 0 && len(g.done) > 0 && !meta.IsStatusConditionTrue(wl.Status.Conditions, v1alpha1.WorkloadFinished) {
				if err := ctl.writeWorkloadStatus(ctx, wl, finishedStatus(wl.Status, g.failed, now)); err != nil {
					ctl.log.Error(err, "finish gang")
				} else {
					wrote = true
				}
			}
			continue
		}
		if len(g.live) == 0 {
			continue
		}
		want, err := ctl.gangWorkload(ctx, g)
		if err != nil {
			ctl.events.Eventf(g.live[0], "Warning", ReasonInvalid, "%v", err)
			continue
		}
		if want == nil {
			continue // not all pods yet, or the PodGroup is not there yet
		}
		switch err := ctl.c.Create(ctx, want); {
		case err == nil:
			wrote = true
		case !kerrors.IsAlreadyExists(err):
			ctl.log.Error(err, "create gang workload", "gang", g.ns+"/"+g.name)
		}
	}
	return wrote
}

// gangWorkload builds the Workload of g: one pod set "main" of the gang's size with the
// pods' common requests, and the topology of the first pod's annotations or else of the
// PodGroup's networkTopology. It is nil while the gang is incomplete.
func (ctl *Controller) gangWorkload(ctx context.Context, g *podGang) (*v1alpha1.Workload, error) {
	first := g.live[0]
	where := fmt.Sprintf("pod %s/%s", first.Namespace, first.Name)
	queue := JobQueueName(&first.ObjectMeta)
	priority := first.Spec.PriorityClassName
	var size int64
	var owners []metav1.OwnerReference
	var pg *unstructured.Unstructured // the gang's PodGroup, if a Volcano one
	switch g.kind {
	case KindPodGang:
		s := first.Annotations[AnnotationGangSize]
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("%s: metadata.annotations[%s]: %q: want a positive number of pods", where, AnnotationGangSize, s)
		}
		size = n
		// Owned by its pods: the Workload goes when the last pod does.
		for _, p := range g.live {
			owners = append(owners, metav1.OwnerReference{APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID})
		}
	case KindPodGroup:
		pg = &unstructured.Unstructured{}
		pg.SetGroupVersionKind(podGroupGVK)
		if err := ctl.direct.Get(ctx, client.ObjectKey{Namespace: g.ns, Name: g.name}, pg); err != nil {
			if meta.IsNoMatchError(err) || kerrors.IsNotFound(err) {
				return nil, nil // the PodGroup (or its CRD) may come later
			}
			return nil, fmt.Errorf("%s: PodGroup %s: %w", where, g.name, err)
		}
		size, _, _ = unstructured.NestedInt64(pg.Object, "spec", "minMember")
		if size < 1 {
			size = 1
		}
		if queue == "" {
			queue = JobQueueName(&metav1.ObjectMeta{Labels: pg.GetLabels()})
		}
		if queue == "" {
			queue, _, _ = unstructured.NestedString(pg.Object, "spec", "queue")
		}
		if pc, _, _ := unstructured.NestedString(pg.Object, "spec", "priorityClassName"); pc != "" {
			priority = pc
		}
		owners = []metav1.OwnerReference{{APIVersion: podGroupGVK.GroupVersion().String(), Kind: KindPodGroup,
			Name: pg.GetName(), UID: pg.GetUID(), Controller: ptr.To(true)}}
	}
	if int64(len(g.live)) < size {
		return nil, nil
	}
	if queue == "" {
		return nil, fmt.Errorf("%s: metadata.labels: no queue-name label on the pod or its PodGroup", where)
	}
	req := PodRequests(&first.Spec)
	for _, p := range g.live[1:] {
		if !equality.Semantic.DeepEqual(PodRequests(&p.Spec), req) {
			return nil, fmt.Errorf("pod %s/%s: spec.containers: requests differ from pod %s of the same gang %s; a gang's pods must be alike",
				p.Namespace, p.Name, first.Name, g.name)
		}
	}
	// The gang's first pod speaks for all: its topology annotations are read with the
	// loader's rules, and a bad one refuses the gang (naming the pod and annotation).
	topo, err := manifest.TopologyOfPod(objectSource, first, "main")
	if err != nil {
		return nil, err
	}
	if topo == nil && pg != nil {
		if topo, err = podGroupTopology(ctl.cache, pg); err != nil {
			return nil, err
		}
	}
	ps := v1alpha1.PodSet{Name: "main", Count: int32(size), Requests: req, ContainerGPU: api.ContainerGPU(&first.Spec),
		NodeSelector: first.Spec.NodeSelector, Tolerations: first.Spec.Tolerations,
		TopologyRequest: fromAPITopology(topo)}
	if a := first.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		ps.NodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	claims, err := gangClaims(g) // podgang_claims.go
	if err != nil {
		return nil, err
	}
	wl := &v1alpha1.Workload{
		ObjectMeta: metav1.ObjectMeta{Name: WorkloadNameForGang(g.kind, g.name), Namespace: g.ns,
			Labels: map[string]string{LabelJobKind: g.kind}, OwnerReferences: owners},
		Spec: v1alpha1.WorkloadSpec{QueueName: queue, PodSets: []v1alpha1.PodSet{ps}, PriorityClassName: priority,
			Owner: &v1alpha1.WorkloadOwner{APIVersion: "v1", Kind: g.kind, Name: g.name}},
	}
	// The claims go where a Job's go (dra_workload.go), so the pass resolves and
	// allocates them alike.
	if err := withPodClaims(wl, []api.PodSet{{Name: ps.Name, Claims: claims}}); err != nil {
		return nil, err
	}
	return wl, nil
}

// podGroupTopology is the request a PodGroup's spec.networkTopology makes of its pods,
// read by the loader's reader against the HyperNodes the last snapshot resolved (a
// highestTierName no HyperNode has yet refuses the gang until one does: asked again at
// every pass, as the gang has no Workload).
func podGroupTopology(c *stateCache, pg *unstructured.Unstructured) (*api.TopologyRequest, error) {
	return manifest.PodGroupTopology(objectSource, pg, c.resolvedHyperNodes())
}
