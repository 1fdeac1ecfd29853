package manifest

import (
	"strconv"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// workloadInput is a converted workload waiting for the references that can only be
// resolved once every file is read (queue, priority class, Volcano PodGroup).
type workloadInput struct {
	api.Workload
	ext workloadExtras
	c   errs
}

// workloadExtras are the loader's notes about one workload.
type workloadExtras struct {
	// volcanoQueue: Queue names a Volcano Queue (cluster-scoped), not a LocalQueue.
	volcanoQueue bool
	// podGroup names the Volcano PodGroup of the workload's pods, if any.
	podGroup string
	// queueField and priorityField are the fields to blame when the reference is bad.
	queueField, priorityField string
}

// newWorkload starts a workload from a job object's metadata: identity, queue, priority
// class label, timing annotations and runtime limits.
func (l *loader) newWorkload(m metav1.ObjectMeta, apiVersion, kind string, c errs) *workloadInput {
	w := &workloadInput{c: c}
	w.Meta = metaOf(m, c.src, DefaultNamespace)
	w.c.name = w.Key()
	w.Owner = api.OwnerRef{APIVersion: apiVersion, Kind: kind, Name: m.Name}
	q := workloadQueue(m, w.c)
	w.Queue, w.ext.queueField, w.ext.volcanoQueue = q.name, q.field, q.volcano
	if pc, ok := m.Labels[api.LabelKueuePriority]; ok {
		w.PriorityClass, w.PrioritySource = pc, api.WorkloadPriority
		w.ext.priorityField = "metadata.labels[" + api.LabelKueuePriority + "]"
	}
	w.Timing, w.MinRuntime = timing(m.Annotations, w.c)
	if s, ok := m.Labels[api.LabelKueueMaxExecTime]; ok {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			w.c.add("metadata.labels["+api.LabelKueueMaxExecTime+"]", "%q is not a positive number of seconds", s)
		} else {
			w.MaxRuntime = time.Duration(n) * time.Second
		}
	}
	if s, ok := m.Annotations[api.AnnotationGangSize]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n <= 0 {
			w.c.add("metadata.annotations["+api.AnnotationGangSize+"]", "%q is not a positive integer", s)
		} else {
			w.MinMember = int32(n)
		}
	}
	if w.Created.IsZero() {
		// No creationTimestamp: order by submit time (FIFO among equal priorities).
		w.Created = time.Time{}.Add(w.Timing.SubmitAt)
	}
	return w
}

// queueName reads the queue label (Kueue's or Gantry's; both must agree if both are set).
func queueName(labels map[string]string, path string, c errs) (string, string) {
	kq, hasK := labels[api.LabelKueueQueueName]
	gq, hasG := labels[api.LabelGantryQueueName]
	switch {
	case hasK && hasG && kq != gq:
		c.add(path+"["+api.LabelGantryQueueName+"]", "%q disagrees with %s %q", gq, api.LabelKueueQueueName, kq)
		return kq, path + "[" + api.LabelKueueQueueName + "]"
	case hasK:
		return kq, path + "[" + api.LabelKueueQueueName + "]"
	case hasG:
		return gq, path + "[" + api.LabelGantryQueueName + "]"
	}
	return "", path
}

// timing reads the simulator's annotations.
func timing(ann map[string]string, c errs) (api.Timing, time.Duration) {
	var t api.Timing
	var minRuntime time.Duration
	for _, f := range []struct {
		key string
		dst *time.Duration
	}{
		{api.AnnotationSubmitAt, &t.SubmitAt},
		{api.AnnotationDuration, &t.Duration},
		{api.AnnotationCheckpointEvery, &t.CheckpointEvery},
		{api.AnnotationMinRuntime, &minRuntime},
	} {
		s, ok := ann[f.key]
		if !ok {
			continue
		}
		d, err := api.ParseDuration(s)
		if err != nil {
			c.add("metadata.annotations["+f.key+"]", "%v", err)
			continue
		}
		*f.dst = d
	}
	return t, minRuntime
}

// addWorkload finishes a workload (Volcano group of its pods, pod priority class) and
// queues it for resolution.
func (l *loader) addWorkload(w *workloadInput, templateAnnotations map[string]string, c errs) {
	if g, ok := templateAnnotations[api.AnnotationVolcanoGroupName]; ok {
		w.ext.podGroup = g
	}
	if w.PriorityClass == "" {
		for i, ps := range w.PodSets {
			if ps.PriorityClassName != "" {
				w.PriorityClass, w.PrioritySource = ps.PriorityClassName, api.PodPriority
				w.ext.priorityField = "pod set " + strconv.Itoa(i) + " priorityClassName"
				break
			}
		}
	}
	checkPodSetGroups(&w.Workload, w.c)
	if !l.register("Workload", w.Meta, w.c) {
		return
	}
	l.workloads = append(l.workloads, w)
}
