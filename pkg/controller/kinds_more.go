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

// rayJobOnExistingCluster: a RayJob that names a RayCluster made elsewhere
// (spec.clusterSelector) and makes none has no pods of its own; Kueue does not queue it
// (its RayCluster is queued instead). One with both is left to the reader to refuse.
func rayJobOnExistingCluster(u *unstructured.Unstructured) bool {
	sel, _, _ := unstructured.NestedMap(u.Object, "spec", "clusterSelector")
	_, hasSpec, _ := unstructured.NestedFieldNoCopy(u.Object, "spec", "rayClusterSpec")
	return len(sel) > 0 && !hasSpec
}

// kubeflowV1Kinds are the training-operator v1 kinds beside PyTorchJob: TFJob,
// XGBoostJob, PaddleJob, JAXJob and its MPIJob (the one before the MPI operator's
// v2beta1) share its suspend switch (runPolicy.suspend), its pod labels (job name,
// lower-cased replica type) and its Succeeded/Failed conditions. mpijobs.kubeflow.org
// is installed by one of the two operators, so one MPIJob version is served.
func kubeflowV1Kinds() []jobKind {
	var out []jobKind
	for _, kind := range []string{"TFJob", "XGBoostJob", "PaddleJob", "JAXJob", "MPIJob"} {
		out = append(out, jobKind{
			GVK:         schema.GroupVersionKind{Group: "kubeflow.org", Version: "v1", Kind: kind},
			SuspendPath: []string{"spec", "runPolicy", "suspend"}, PodLabel: "training.kubeflow.org/job-name",
			PodSetOf: kubeflowPodSet,
			Finished: conditionFinished("Succeeded", "Failed"),
		})
	}
	return out
}
