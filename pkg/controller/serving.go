package controller

import (
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Serving workloads: Deployments, StatefulSets and LeaderWorkerSets, as Kueue admits
// them (its deployment, statefulset and leaderworkerset integrations). They have no
// suspend switch: their controllers create the pods at once, and the pods wait Pending
// because they name Gantry as their scheduler; admitting the Workload lets the binder
// place them. What each object becomes is the shared reader's answer
// (manifest.WorkloadOfObject, the loader's reader of the same kind):
//   - a Deployment: one Workload of one pod per pod its ReplicaSets made ("pod-<pod>",
//     owned by the pod, so it goes with it), read from the pod's own spec so a rollout's
//     new and old pods each ask for what they run;
//   - a StatefulSet: one gang of `replicas` pods ("statefulset-<name>");
//   - a LeaderWorkerSet: one gang per group ("leaderworkerset-<name>-<group>").
//
// The pods are told apart by servingGangOf, the one place that matches a serving pod
// to its Workload; the pod store indexes them under it (gangOf), so podsOf finds them.

// LeaderWorkerSet's pod labels (sigs.k8s.io/lws api/leaderworkerset/v1).
const (
	lwsNameLabel        = "leaderworkerset.sigs.k8s.io/name"
	lwsGroupIndexLabel  = "leaderworkerset.sigs.k8s.io/group-index"
	lwsWorkerIndexLabel = "leaderworkerset.sigs.k8s.io/worker-index"
)

// The owner kinds of serving Workloads (WorkloadOwner.Kind), which are also the gang
// kinds servingGangOf gives their pods.
const (
	// KindServingPod owns the Workload of one Deployment pod: the pod itself.
	KindServingPod      = "Pod"
	KindStatefulSet     = "StatefulSet"
	KindLeaderWorkerSet = "LeaderWorkerSet"
)

// AnnotationServingOwner on a serving Workload names the object it was made for,
// "<Kind>/<name>", so the Workloads of one object are found again when it scales.
const AnnotationServingOwner = "gantry.dev/serving-owner"

// The serving kinds' GroupVersionKinds, watched through unstructured objects (the LWS
// CRD may be missing; then it is not watched).
var (
	deploymentGVK  = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}
	statefulSetGVK = schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: KindStatefulSet}
	lwsGVK         = schema.GroupVersionKind{Group: "leaderworkerset.x-k8s.io", Version: "v1", Kind: KindLeaderWorkerSet}
)

// servingKinds lists the serving kinds and where each keeps the pod templates whose
// labels may carry the queue (Kueue's webhooks copy the object's queue label there,
// so either place counts).
func servingKinds() []servingKind {
	return []servingKind{
		{GVK: deploymentGVK, Templates: [][]string{{"spec", "template"}}, desired: deploymentWorkloads},
		{GVK: statefulSetGVK, Templates: [][]string{{"spec", "template"}}, desired: statefulSetWorkloads},
		{GVK: lwsGVK, Templates: [][]string{{"spec", "leaderWorkerTemplate", "leaderTemplate"},
			{"spec", "leaderWorkerTemplate", "workerTemplate"}}, desired: lwsWorkloads},
	}
}

// servingKind is one serving kind: its GVK, its pod templates, and the Workloads one
// object of it should have now (serving_kinds.go).
type servingKind struct {
	GVK       schema.GroupVersionKind
	Templates [][]string
	desired   func(o servingObject, pods []*corev1.Pod) ([]servingWant, error)
}

// servingObject is one queued object of a serving kind.
type servingObject struct {
	kind servingKind
	u    *unstructured.Unstructured
}

// ownerKey is the AnnotationServingOwner value of the object's Workloads.
func (o servingObject) ownerKey() string { return o.kind.GVK.Kind + "/" + o.u.GetName() }

// servingGangOf names the gang of a serving pod: (KindServingPod, pod name) for a pod
// of a Deployment's ReplicaSet, (KindStatefulSet, set name) for a StatefulSet's pod,
// (KindLeaderWorkerSet, "<lws>-<group>") for a LeaderWorkerSet's, or "" for other pods.
// LWS labels come first: LeaderWorkerSet runs its groups through StatefulSets.
func servingGangOf(p *corev1.Pod) (kind, name string) {
	if lws, group := p.Labels[lwsNameLabel], p.Labels[lwsGroupIndexLabel]; lws != "" && group != "" {
		return KindLeaderWorkerSet, lwsGroupName(lws, group)
	}
	ref := metav1.GetControllerOf(p)
	if ref == nil || !strings.HasPrefix(ref.APIVersion, "apps/") {
		return "", ""
	}
	switch ref.Kind {
	case KindStatefulSet:
		return KindStatefulSet, ref.Name
	case "ReplicaSet":
		if deploymentOfPod(p) != "" {
			return KindServingPod, p.Name
		}
	}
	return "", ""
}

// deploymentOfPod names the Deployment whose ReplicaSet controls p, or "": the
// Deployment controller names a ReplicaSet "<deployment>-<pod-template-hash>" and puts
// that hash on its pods, so the name is read without looking the ReplicaSet up.
func deploymentOfPod(p *corev1.Pod) string {
	ref := metav1.GetControllerOf(p)
	hash := p.Labels["pod-template-hash"]
	if ref == nil || ref.Kind != "ReplicaSet" || hash == "" {
		return ""
	}
	name, ok := strings.CutSuffix(ref.Name, "-"+hash)
	if !ok || name == "" {
		return ""
	}
	return name
}

// lwsGroupName is the gang name of one LeaderWorkerSet group.
func lwsGroupName(lws, group string) string { return lws + "-" + group }

// servingPodSet is the pod set of a serving pod in its Workload, by the shared reader's
// names. Deployments and StatefulSets have one pod set. A LeaderWorkerSet group has
// "leader" and "worker" when it has a leader template and "main" otherwise, which its
// pods do not tell; "" fits any slot, and the binder fills the sorted slots (leader
// first) with the pods sorted by name, where the leader "<lws>-<group>" comes before
// its workers "<lws>-<group>-<index>".
func servingPodSet(*corev1.Pod) string { return "" }

// isServingKind reports whether a Workload owner kind is a serving kind's.
func isServingKind(kind string) bool {
	return kind == KindServingPod || kind == KindStatefulSet || kind == KindLeaderWorkerSet
}
