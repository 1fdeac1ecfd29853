package controller

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// jobSetPodSets reads a JobSet's spec.replicatedJobs: each replicated job is one pod
// set (named like the jobset.sigs.k8s.io/replicatedjob-name pod label) of replicas ×
// parallelism pods (parallelism capped by completions, as for a Job).
func jobSetPodSets(u *unstructured.Unstructured) ([]v1alpha1.PodSet, error) {
	rjs, _, _ := unstructured.NestedSlice(u.Object, "spec", "replicatedJobs")
	if len(rjs) == 0 {
		return nil, fmt.Errorf("spec.replicatedJobs: none")
	}
	var out []v1alpha1.PodSet
	for i, rj := range rjs {
		field := fmt.Sprintf("spec.replicatedJobs[%d]", i)
		m, ok := rj.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: not an object", field)
		}
		name, _, _ := unstructured.NestedString(m, "name")
		if name == "" {
			return nil, fmt.Errorf("%s.name: empty", field)
		}
		replicas, found, _ := unstructured.NestedInt64(m, "replicas")
		if !found {
			replicas = 1
		}
		par, found, _ := unstructured.NestedInt64(m, "template", "spec", "parallelism")
		if !found {
			par = 1
		}
		if c, ok, _ := unstructured.NestedInt64(m, "template", "spec", "completions"); ok && c < par {
			par = c
		}
		tmpl, _, _ := unstructured.NestedMap(m, "template", "spec", "template")
		ps, err := podSetFromTemplate(name, int32(replicas*par), tmpl, field+".template.spec")
		if err != nil {
			return nil, err
		}
		out = append(out, ps)
	}
	return out, nil
}

// rayJobFinished reads KubeRay's status.jobDeploymentStatus.
func rayJobFinished(u *unstructured.Unstructured) (done, failed bool) {
	s, _, _ := unstructured.NestedString(u.Object, "status", "jobDeploymentStatus")
	switch s {
	case "Complete":
		return true, false
	case "Failed":
		return true, true
	}
	return false, false
}
