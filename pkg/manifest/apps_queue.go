package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// podTemplate is the metadata of the pod template that speaks for a workload's pods, and
// its path in the object (for errors).
type podTemplate struct {
	meta metav1.ObjectMeta
	path string
}

// templateQueue reads the Volcano queue a pod template names. Volcano's PodGroup
// controller gives a pod of a Deployment, ReplicaSet, StatefulSet or Job that is in no
// PodGroup yet a PodGroup in the queue of the pod's scheduling.volcano.sh/queue-name
// annotation, which the pods have from the template (Volcano's deployment example sets
// it there). So the template's annotation routes the workload as the object's own
// queue label or annotation does; naming another queue than those is an error. Pods
// that name their PodGroup take its queue instead, so then the annotation is not read.
func templateQueue(w *workloadInput, t podTemplate) {
	q, ok := t.meta.Annotations[AnnotationVolcanoQueueName]
	if !ok || t.meta.Annotations[api.AnnotationVolcanoGroupName] != "" {
		return
	}
	field := t.path + ".metadata.annotations[" + AnnotationVolcanoQueueName + "]"
	switch {
	case w.Queue == "":
		w.Queue, w.ext.queueField, w.ext.volcanoQueue = q, field, true
	case w.Queue != q:
		w.c.add(field, "%q disagrees with %s %q", q, w.ext.queueField, w.Queue)
	default:
		// As for the object's own keys: a LocalQueue of that name wins, else the Volcano Queue.
		w.ext.volcanoQueue = true
	}
}
