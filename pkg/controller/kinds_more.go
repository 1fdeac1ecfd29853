package controller

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

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

// kubeflowV1Kinds are the training-operator v1 kinds beside PyTorchJob: TFJob,
// XGBoostJob, PaddleJob and JAXJob share its suspend switch (runPolicy.suspend), its pod
// labels (job name, lower-cased replica type) and its Succeeded/Failed conditions.
func kubeflowV1Kinds() []jobKind {
	var out []jobKind
	for _, kind := range []string{"TFJob", "XGBoostJob", "PaddleJob", "JAXJob"} {
		out = append(out, jobKind{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: kind},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: kubeflowPodSet,
			Finished: conditionFinished("Succeeded", "Failed"),
		})
	}
	return out
}
