package controller

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

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
