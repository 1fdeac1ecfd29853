package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
)

// Typed holds queue objects already decoded into their Go types, as a Kubernetes
// client reads them. Namespaces are optional: with them, each LocalQueue is checked
// against its ClusterQueue's namespaceSelector.
type Typed struct {
	Flavors                 []*v1alpha1.ResourceFlavor
	Cohorts                 []*v1alpha1.Cohort
	ClusterQueues           []*v1alpha1.ClusterQueue
	LocalQueues             []*v1alpha1.LocalQueue
	WorkloadPriorityClasses []*v1alpha1.WorkloadPriorityClass
	Topologies              []*v1alpha1.Topology
	Namespaces              []*corev1.Namespace
}

// LoadTyped converts typed objects the way Load converts the same objects read from
// YAML (same defaults, checks and reference resolution; the decoding step is skipped,
// as the types are already checked). Every object's Source is source. Problems come
// back as an ErrorList naming each object and field; as with Load, the objects
// returned alongside errors are for diagnostics only.
func LoadTyped(source string, in Typed) (*api.Objects, error) {
	l := newLoader()
	c := func(kind, name string) errs {
		return errs{list: &l.errs, src: srcOf(source, 0), kind: kind, name: name}
	}
	for _, o := range in.Flavors {
		l.addResourceFlavor(o, c("ResourceFlavor", o.Name))
	}
	for _, o := range in.Cohorts {
		l.addCohort(o, c("Cohort", o.Name))
	}
	for _, o := range in.ClusterQueues {
		l.addClusterQueue(o, c("ClusterQueue", o.Name))
	}
	for _, o := range in.LocalQueues {
		l.addLocalQueue(o, c("LocalQueue", joinName(o.Namespace, o.Name)))
	}
	for _, o := range in.WorkloadPriorityClasses {
		l.addWorkloadPriorityClass(o, c("WorkloadPriorityClass", o.Name))
	}
	for _, o := range in.Topologies {
		l.addTopology(o, c("Topology", o.Name))
	}
	for _, o := range in.Namespaces {
		l.addNamespace(o, c("Namespace", o.Name))
	}
	return l.finish()
}
