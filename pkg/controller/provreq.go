package controller

import (
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
)

// Kueue's ProvisioningRequest admission check on a cluster: for a workload that
// reserved quota in a ClusterQueue with such a check, one PodTemplate per managed pod
// set and an autoscaling.x-k8s.io/v1 ProvisioningRequest naming them, both owned by
// the Workload and named as Kueue names them; the request's conditions become the
// check's state in the Workload's status (provreq_state.go); both are deleted when the
// workload finishes or is evicted (provreq_client.go). The ProvisioningRequest is read
// and written unstructured: cluster-autoscaler's typed API module pulls test
// frameworks into the build.

// provReqGVK is cluster-autoscaler's ProvisioningRequest.
func provReqGVK() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: "autoscaling.x-k8s.io", Version: "v1", Kind: "ProvisioningRequest"}
}

// labelProvReqWorkload marks the requests and templates made for a Workload (its UID:
// names may be longer than a label value allows), for their deletion.
const labelProvReqWorkload = "gantry.dev/provisioning-for"

// provReqPlaceholderImage is the image of the PodTemplates' one container: a template
// stands for its pod set's shape (requests, node selector, affinity, tolerations), which
// is all the autoscaler reads, and Kubernetes requires an image.
const provReqPlaceholderImage = "registry.k8s.io/pause:3.10"

// provisioningObjects are the PodTemplates and the ProvisioningRequest of a check's
// attempt-th request for wl, under the flavor of each pod set's reservation (flavors,
// by pod set name): only the pod sets
// that request one of the config's managed resources (all when it names none), at their
// admitted counts. ok is false when no pod set is managed: the check is Ready without a
// request.
func provisioningObjects(wl *v1alpha1.Workload, check string, attempt int, cfg api.ProvisioningRequestConfig,
	admitted map[string]int32, flavors map[string]api.ResourceFlavor) ([]*corev1.PodTemplate, *unstructured.Unstructured, bool) {
	name := api.ProvisioningRequestName(wl.Name, check, attempt)
	owner := workloadOwnerRef(wl)
	labels := map[string]string{labelProvReqWorkload: string(wl.UID)}
	var templates []*corev1.PodTemplate
	var podSets []any
	for _, ps := range wl.Spec.PodSets {
		if !cfg.Manages(requestVector(ps.Requests)) {
			continue
		}
		count := ps.Count
		if n, ok := admitted[ps.Name]; ok && n > 0 && n < count {
			count = n
		}
		pt := &corev1.PodTemplate{
			ObjectMeta: metav1.ObjectMeta{Name: api.ProvisioningPodTemplateName(name, ps.Name), Namespace: wl.Namespace,
				Labels: labels, OwnerReferences: []metav1.OwnerReference{owner}},
			Template: podSetTemplate(ps, flavors[ps.Name]),
		}
		templates = append(templates, pt)
		podSets = append(podSets, map[string]any{"podTemplateRef": map[string]any{"name": pt.Name}, "count": int64(count)})
	}
	if len(templates) == 0 {
		return nil, nil, false
	}
	pr := &unstructured.Unstructured{}
	pr.SetGroupVersionKind(provReqGVK())
	pr.SetName(name)
	pr.SetNamespace(wl.Namespace)
	pr.SetLabels(labels)
	pr.SetOwnerReferences([]metav1.OwnerReference{owner})
	spec := map[string]any{"provisioningClassName": cfg.ClassName, "podSets": podSets}
	if len(cfg.Parameters) > 0 {
		params := map[string]any{}
		for k, v := range cfg.Parameters {
			params[k] = v
		}
		spec["parameters"] = params
	}
	pr.Object["spec"] = spec
	return templates, pr, true
}

// podSetTemplate is a pod set's shape as a pod template, with its flavors' node labels
// and tolerations added, as Kueue injects them on admission.
func podSetTemplate(ps v1alpha1.PodSet, f api.ResourceFlavor) corev1.PodTemplateSpec {
	limits := corev1.ResourceList{}
	for r, q := range ps.Requests {
		if extendedResource(r) {
			limits[r] = q // extended resources need limits equal to requests
		}
	}
	spec := corev1.PodSpec{
		Containers: []corev1.Container{{Name: "main", Image: provReqPlaceholderImage,
			Resources: corev1.ResourceRequirements{Requests: ps.Requests, Limits: limits}}},
		NodeSelector: map[string]string{},
		Tolerations:  append([]corev1.Toleration(nil), ps.Tolerations...),
	}
	for k, v := range ps.NodeSelector {
		spec.NodeSelector[k] = v
	}
	for k, v := range f.NodeLabels {
		spec.NodeSelector[k] = v
	}
	spec.Tolerations = append(spec.Tolerations, f.Tolerations...)
	if ps.NodeAffinity != nil {
		spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: ps.NodeAffinity.DeepCopy()}}
	}
	return corev1.PodTemplateSpec{Spec: spec}
}

// extendedResource: a resource outside Kubernetes' own names (nvidia.com/gpu).
func extendedResource(r corev1.ResourceName) bool {
	n := string(r)
	return strings.Contains(n, "/") && !strings.Contains(n, "kubernetes.io/")
}

func requestVector(rl corev1.ResourceList) resources.Vector {
	out := resources.Vector{}
	for r, q := range rl {
		out[resources.Name(r)] = resources.Amount(q.MilliValue())
	}
	return out
}

func workloadOwnerRef(wl *v1alpha1.Workload) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: v1alpha1.SchemeGroupVersion.String(), Kind: "Workload", Name: wl.Name, UID: wl.UID,
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}
}
