package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Serving workloads, as Kueue's pod-group integrations admit them
// (pkg/controller/jobs/deployment and statefulset): the queue and priority labels on the
// Deployment or StatefulSet, the pods of its template.

// deployment: Kueue's webhook only labels the pod template, and each pod is then
// admitted on its own (the plain-pod integration), so each of the `replicas` pods
// (default 1) is a workload of one pod, named "<name>-<index>". A Deployment scaled to
// zero has no workload.
func (l *loader) deployment(d document, c errs) {
	var in appsv1.Deployment
	if !decode(d, &in, false, c) {
		return
	}
	set := podSet("main", 1, in.Spec.Template, "spec.template", c)
	n := replicasOf(in.Spec.Replicas, "spec.replicas", c)
	l.addGroups(in.ObjectMeta, "apps/v1", "Deployment", n, []api.PodSet{set}, podTemplate{in.Spec.Template.ObjectMeta, "spec.template"}, c)
}

// replicaSet: a ReplicaSet of its own (Volcano's examples run plain pods this way) is
// read as a Deployment is, each of its pods a workload of one pod. Volcano's PodGroup
// controller gives the pods one PodGroup of minMember 1, so no pod waits for another
// there either. A ReplicaSet with a controller (a Deployment's, in a cluster dump) is
// skipped: its pods are its controller's, read from the controller.
func (l *loader) replicaSet(d document, c errs) {
	var in appsv1.ReplicaSet
	if !decode(d, &in, false, c) {
		return
	}
	if owner := metav1.GetControllerOfNoCopy(&in); owner != nil {
		l.objs.Skipped = append(l.objs.Skipped, api.Skipped{Source: c.src, APIVersion: "apps/v1", Kind: "ReplicaSet", Name: c.name,
			Why: "its pods are those of its controller, " + owner.Kind + " " + owner.Name})
		return
	}
	set := podSet("main", 1, in.Spec.Template, "spec.template", c)
	n := replicasOf(in.Spec.Replicas, "spec.replicas", c)
	l.addGroups(in.ObjectMeta, "apps/v1", "ReplicaSet", n, []api.PodSet{set}, podTemplate{in.Spec.Template.ObjectMeta, "spec.template"}, c)
}

// statefulSet: Kueue admits the whole set as one gang (a pod group of `replicas` pods,
// default 1, in pod set "main"), named after the StatefulSet. A StatefulSet scaled to
// zero has no workload, as in Kueue.
func (l *loader) statefulSet(d document, c errs) {
	var in appsv1.StatefulSet
	if !decode(d, &in, false, c) {
		return
	}
	n := int32(1)
	if in.Spec.Replicas != nil {
		n = *in.Spec.Replicas
	}
	if n < 0 {
		c.add("spec.replicas", "%d is negative", n)
		return
	}
	if n == 0 {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "apps/v1", "StatefulSet", c)
	w.PodSets = []api.PodSet{podSet("main", n, in.Spec.Template, "spec.template", c)}
	templateQueue(w, podTemplate{in.Spec.Template.ObjectMeta, "spec.template"})
	l.addWorkload(w, in.Spec.Template.Annotations, c)
}
