package controller

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// jobKind describes one job kind Gantry queues: where it keeps its suspend switch,
// how its pods are labelled, how its replica groups become pod sets, and when it is
// finished. Jobs are handled typed; the others through unstructured objects, so
// Gantry needs none of their Go modules and skips a kind whose CRD is not installed.
type jobKind struct {
	GVK schema.GroupVersionKind
	// SuspendPath is the boolean field that holds the job's pods back.
	SuspendPath []string
	// PodLabel is the label its operator puts on every pod, valued with the job name.
	PodLabel string
	// PodSetOf names the pod set a pod belongs to ("" when it cannot be told).
	PodSetOf func(p *corev1.Pod) string
	// PodSets reads the replica groups of an object.
	PodSets func(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error)
	// Finished reads the terminal state from the object's status.
	Finished func(u *unstructured.Unstructured) (done, failed bool)
}

// jobKinds lists the kinds handled through unstructured objects.
func jobKinds() []jobKind {
	return []jobKind{
		{
			GVK:         schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayCluster"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: "ray.io/cluster",
			PodSetOf: func(p *corev1.Pod) string { return p.Labels["ray.io/group"] },
			PodSets:  rayClusterPodSets("spec"),
			Finished: func(*unstructured.Unstructured) (bool, bool) { return false, false },
		},
		{
			// KubeRay labels the pods of a RayJob's cluster with the RayJob's name.
			GVK:         schema.GroupVersionKind{Group: "ray.io", Version: "v1", Kind: "RayJob"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: "ray.io/originated-from-cr-name",
			PodSetOf: func(p *corev1.Pod) string { return p.Labels["ray.io/group"] },
			PodSets:  rayClusterPodSets("spec", "rayClusterSpec"),
			Finished: rayJobFinished,
		},
		{
			GVK:         schema.GroupVersionKind{Group: "jobset.x-k8s.io", Version: "v1alpha2", Kind: "JobSet"},
			SuspendPath: []string{"spec", "suspend"}, PodLabel: "jobset.sigs.k8s.io/jobset-name",
			PodSetOf: func(p *corev1.Pod) string { return p.Labels["jobset.sigs.k8s.io/replicatedjob-name"] },
			PodSets:  jobSetPodSets,
			Finished: conditionFinished("Completed", "Failed"),
		},
		{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: "PyTorchJob"},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: func(p *corev1.Pod) string { return lowerFirst(p.Labels["training.kubeflow.org/replica-type"]) },
			PodSets:  replicaSpecPodSets("pytorchReplicaSpecs"),
			Finished: conditionFinished("Succeeded", "Failed"),
		},
		{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v2beta1", Kind: "MPIJob"},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: func(p *corev1.Pod) string { return lowerFirst(p.Labels["training.kubeflow.org/replica-type"]) },
			PodSets:  replicaSpecPodSets("mpiReplicaSpecs"),
			Finished: conditionFinished("Succeeded", "Failed"),
		},
	}
}

// podSetOfJob: a Job has one pod set.
func podSetOfJob(*corev1.Pod) string { return "main" }

// podLabelOf returns the pod label and pod-set function of an owner kind.
func podLabelOf(kind string) (string, func(*corev1.Pod) string) {
	if kind == "Job" {
		return batchv1.JobNameLabel, podSetOfJob
	}
	for _, k := range jobKinds() {
		if k.GVK.Kind == kind {
			return k.PodLabel, k.PodSetOf
		}
	}
	return "", func(*corev1.Pod) string { return "" }
}

// podSetFromTemplate builds a pod set from a pod template held in an unstructured map.
func podSetFromTemplate(name string, count int32, tmpl map[string]any, field string) (v1alpha1.PodSet, error) {
	var pt corev1.PodTemplateSpec
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(tmpl, &pt); err != nil {
		return v1alpha1.PodSet{}, fmt.Errorf("%s.template: %w", field, err)
	}
	if count < 1 {
		return v1alpha1.PodSet{}, fmt.Errorf("%s: %d replicas: want at least 1", field, count)
	}
	ps := v1alpha1.PodSet{Name: name, Count: count, Requests: PodRequests(&pt.Spec), ContainerGPU: api.ContainerGPU(&pt.Spec),
		NodeSelector: pt.Spec.NodeSelector, Tolerations: pt.Spec.Tolerations,
		TopologyRequest: topologyFromAnnotations(pt.Annotations)}
	if a := pt.Spec.Affinity; a != nil && a.NodeAffinity != nil {
		ps.NodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	return ps, nil
}

// rayClusterPodSets reads headGroupSpec and workerGroupSpecs of the cluster spec at
// path (spec for a RayCluster, spec.rayClusterSpec for a RayJob). Pod set names follow
// KubeRay's ray.io/group label: "headgroup" and each worker group's name.
func rayClusterPodSets(path ...string) func(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error) {
	return func(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error) {
		spec, _, _ := unstructured.NestedMap(u.Object, path...)
		head, _, _ := unstructured.NestedMap(spec, "headGroupSpec", "template")
		hps, err := podSetFromTemplate("headgroup", 1, head, "spec.headGroupSpec")
		if err != nil {
			return nil, err
		}
		out := []v1alpha1.PodSet{hps}
		workers, _, _ := unstructured.NestedSlice(spec, "workerGroupSpecs")
		for i, w := range workers {
			wm, ok := w.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("spec.workerGroupSpecs[%d]: not an object", i)
			}
			name, _, _ := unstructured.NestedString(wm, "groupName")
			replicas, found, _ := unstructured.NestedInt64(wm, "replicas")
			if !found {
				replicas = 1
			}
			tmpl, _, _ := unstructured.NestedMap(wm, "template")
			ps, err := podSetFromTemplate(name, int32(replicas), tmpl, fmt.Sprintf("spec.workerGroupSpecs[%d]", i))
			if err != nil {
				return nil, err
			}
			if min, ok, _ := unstructured.NestedInt64(wm, "minReplicas"); ok && min > 0 && min < replicas {
				m := int32(min)
				ps.MinCount = &m
			}
			out = append(out, ps)
		}
		return out, nil
	}
}

// replicaSpecPodSets reads Kubeflow's spec.<field>.<ReplicaType>{replicas, template};
// pod sets are named by the lower-cased replica type ("master", "worker", "launcher").
func replicaSpecPodSets(field string) func(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error) {
	return func(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error) {
		specs, _, _ := unstructured.NestedMap(u.Object, "spec", field)
		types := make([]string, 0, len(specs))
		for t := range specs {
			types = append(types, t)
		}
		sort.Strings(types)
		var out []v1alpha1.PodSet
		for _, t := range types {
			rs, _ := specs[t].(map[string]any)
			replicas, found, _ := unstructured.NestedInt64(rs, "replicas")
			if !found {
				replicas = 1
			}
			tmpl, _, _ := unstructured.NestedMap(rs, "template")
			ps, err := podSetFromTemplate(lowerFirst(t), int32(replicas), tmpl, "spec."+field+"."+t)
			if err != nil {
				return nil, err
			}
			out = append(out, ps)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("spec.%s: no replica specs", field)
		}
		return out, nil
	}
}

// conditionFinished reads status.conditions for a true success or failure type.
func conditionFinished(success, failure string) func(u *unstructured.Unstructured) (bool, bool) {
	return func(u *unstructured.Unstructured) (bool, bool) {
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			cm, _ := c.(map[string]any)
			if cm["status"] != "True" {
				continue
			}
			switch cm["type"] {
			case success:
				return true, false
			case failure:
				return true, true
			}
		}
		return false, false
	}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	if b[0] >= 'A' && b[0] <= 'Z' {
		b[0] += 'a' - 'A'
	}
	return string(b)
}
