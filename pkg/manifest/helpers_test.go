package manifest

import (
	"strings"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// docs joins manifests into one multi-document file.
func docs(parts ...string) string { return strings.Join(parts, "---\n") }

// queueSetup is a minimal valid queue configuration for workload tests: flavor "f",
// ClusterQueue "cq", LocalQueue "q" in namespace "ns", priority classes high and low.
func queueSetup() string {
	return docs(k8s.MakeFlavor("f").YAML(),
		k8s.MakeClusterQueue("cq").Quota("f", "nvidia.com/gpu", "64").YAML(),
		k8s.MakeLocalQueue("ns", "q", "cq").YAML(),
		k8s.MakePriorityClass("high", 500).YAML(), k8s.MakePriorityClass("low", 10).YAML())
}
