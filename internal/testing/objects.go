package testing

import (
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// FlavorWrapper builds an api.ResourceFlavor.
type FlavorWrapper struct{ f api.ResourceFlavor }

// MakeFlavor starts a flavor with no node labels or taints.
func MakeFlavor(name string) *FlavorWrapper {
	return &FlavorWrapper{api.ResourceFlavor{Meta: api.Meta{Name: name}, NodeLabels: map[string]string{}}}
}

// Label adds a node label the flavor's nodes carry.
func (b *FlavorWrapper) Label(k, v string) *FlavorWrapper { b.f.NodeLabels[k] = v; return b }

// Taint adds a taint the flavor's nodes carry.
func (b *FlavorWrapper) Taint(k, v string, e corev1.TaintEffect) *FlavorWrapper {
	b.f.NodeTaints = append(b.f.NodeTaints, corev1.Taint{Key: k, Value: v, Effect: e})
	return b
}

// Obj returns the flavor.
func (b *FlavorWrapper) Obj() api.ResourceFlavor { return b.f }

// LocalQueueWrapper builds an api.LocalQueue.
type LocalQueueWrapper struct{ lq api.LocalQueue }

// MakeLocalQueue starts LocalQueue ns/name pointing at ClusterQueue cq.
func MakeLocalQueue(ns, name, cq string) *LocalQueueWrapper {
	return &LocalQueueWrapper{api.LocalQueue{Meta: api.Meta{Name: name, Namespace: ns}, ClusterQueue: cq}}
}

// Stop sets the stop policy.
func (b *LocalQueueWrapper) Stop(p api.StopPolicy) *LocalQueueWrapper { b.lq.StopPolicy = p; return b }

// Weight sets the admission fair-sharing weight in thousandths.
func (b *LocalQueueWrapper) Weight(milli int64) *LocalQueueWrapper {
	b.lq.FairSharing.WeightMilli = milli
	return b
}

// Obj returns the LocalQueue.
func (b *LocalQueueWrapper) Obj() api.LocalQueue { return b.lq }

// ObjectsWrapper assembles api.Objects. Every ClusterQueue comes with a LocalQueue "lq"
// in namespace "ns-<its name>", so MakeWorkload("ns-a", ...) queues in ClusterQueue a.
type ObjectsWrapper struct{ o api.Objects }

// MakeObjects starts an empty object set.
func MakeObjects() *ObjectsWrapper { return &ObjectsWrapper{} }

// Flavors adds resource flavors.
func (b *ObjectsWrapper) Flavors(fs ...api.ResourceFlavor) *ObjectsWrapper {
	b.o.Flavors = append(b.o.Flavors, fs...)
	return b
}

// ClusterQueues adds ClusterQueues, each with its LocalQueue ns-<name>/lq.
func (b *ObjectsWrapper) ClusterQueues(cqs ...api.ClusterQueue) *ObjectsWrapper {
	b.o.ClusterQueues = append(b.o.ClusterQueues, cqs...)
	for _, cq := range cqs {
		b.o.LocalQueues = append(b.o.LocalQueues, MakeLocalQueue("ns-"+cq.Name, "lq", cq.Name).Obj())
	}
	return b
}

// Cohorts adds cohorts.
func (b *ObjectsWrapper) Cohorts(cs ...api.Cohort) *ObjectsWrapper {
	b.o.Cohorts = append(b.o.Cohorts, cs...)
	return b
}

// LocalQueues adds LocalQueues besides the ClusterQueues' own.
func (b *ObjectsWrapper) LocalQueues(lqs ...api.LocalQueue) *ObjectsWrapper {
	b.o.LocalQueues = append(b.o.LocalQueues, lqs...)
	return b
}

// Namespace adds a namespace with labels (for namespace selectors).
func (b *ObjectsWrapper) Namespace(name string, labels map[string]string) *ObjectsWrapper {
	b.o.Namespaces = append(b.o.Namespaces, api.Namespace{Meta: api.Meta{Name: name, Labels: labels}})
	return b
}

// Obj returns the objects.
func (b *ObjectsWrapper) Obj() *api.Objects { o := b.o; return &o }
