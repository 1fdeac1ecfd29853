package k8s

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LocalQueueWrapper builds a LocalQueue.
type LocalQueueWrapper struct{ ns, name, cq string }

// MakeLocalQueue starts LocalQueue ns/name pointing at ClusterQueue cq.
func MakeLocalQueue(ns, name, cq string) *LocalQueueWrapper { return &LocalQueueWrapper{ns, name, cq} }

// Obj builds the LocalQueue.
func (l *LocalQueueWrapper) Obj() *v1alpha1.LocalQueue {
	return &v1alpha1.LocalQueue{ObjectMeta: metav1.ObjectMeta{Name: l.name, Namespace: l.ns},
		Spec: v1alpha1.LocalQueueSpec{ClusterQueue: l.cq}}
}

// YAML renders the LocalQueue as a Kueue manifest.
func (l *LocalQueueWrapper) YAML() string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\nmetadata:\n  namespace: %s\n  name: %s\nspec:\n  clusterQueue: %s\n",
		l.ns, l.name, l.cq)
}

// FlavorWrapper builds a ResourceFlavor.
type FlavorWrapper struct {
	name   string
	labels map[string]string
}

// MakeFlavor starts a flavor whose nodes carry no particular label.
func MakeFlavor(name string) *FlavorWrapper { return &FlavorWrapper{name: name} }

// Label adds a label the flavor's nodes carry.
func (f *FlavorWrapper) Label(k, v string) *FlavorWrapper { set(&f.labels, k, v); return f }

// Obj builds the flavor.
func (f *FlavorWrapper) Obj() *v1alpha1.ResourceFlavor {
	rf := &v1alpha1.ResourceFlavor{ObjectMeta: metav1.ObjectMeta{Name: f.name}}
	rf.Spec.NodeLabels = copyMap(f.labels)
	return rf
}

// YAML renders the flavor as a Kueue manifest.
func (f *FlavorWrapper) YAML() string {
	var s strings.Builder
	fmt.Fprintf(&s, "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata:\n  name: %s\n", f.name)
	if len(f.labels) > 0 {
		s.WriteString("spec:\n")
		writeMap(&s, "  nodeLabels", f.labels, "    ")
	}
	return s.String()
}

// PriorityClassWrapper builds a WorkloadPriorityClass.
type PriorityClassWrapper struct {
	name  string
	value int32
}

// MakePriorityClass starts a priority class of the given value.
func MakePriorityClass(name string, value int32) *PriorityClassWrapper {
	return &PriorityClassWrapper{name, value}
}

// Obj builds the priority class.
func (p *PriorityClassWrapper) Obj() *v1alpha1.WorkloadPriorityClass {
	return &v1alpha1.WorkloadPriorityClass{ObjectMeta: metav1.ObjectMeta{Name: p.name}, Value: p.value}
}

// YAML renders the priority class as a Kueue manifest.
func (p *PriorityClassWrapper) YAML() string {
	return fmt.Sprintf("apiVersion: kueue.x-k8s.io/v1beta1\nkind: WorkloadPriorityClass\nmetadata:\n  name: %s\nvalue: %d\n", p.name, p.value)
}
