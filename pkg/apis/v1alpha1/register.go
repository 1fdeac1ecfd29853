package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// AddToScheme registers every gantry.dev/v1alpha1 kind with a scheme. It is a plain
// function, not an init()-time registry, so callers build their schemes explicitly.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(SchemeGroupVersion,
		&ResourceFlavor{}, &ResourceFlavorList{},
		&ClusterQueue{}, &ClusterQueueList{},
		&LocalQueue{}, &LocalQueueList{},
		&Cohort{}, &CohortList{},
		&WorkloadPriorityClass{}, &WorkloadPriorityClassList{},
		&Topology{}, &TopologyList{},
		&NodePool{}, &NodePoolList{},
		&ClusterEvent{}, &ClusterEventList{},
		&Workload{}, &WorkloadList{},
	)
	metav1.AddToGroupVersion(s, SchemeGroupVersion)
	return nil
}
