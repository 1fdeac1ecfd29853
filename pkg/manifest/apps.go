package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	appsv1 "k8s.io/api/apps/v1"
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
	l.addGroups(in.ObjectMeta, "apps/v1", "Deployment", n, []api.PodSet{set}, in.Spec.Template.Annotations, c)
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
	l.addWorkload(w, in.Spec.Template.Annotations, c)
}
