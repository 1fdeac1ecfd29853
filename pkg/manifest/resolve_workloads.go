package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

// podInput is a plain Pod waiting to be grouped.
type podInput struct {
	obj corev1.Pod
	set api.PodSet
	c   errs
}

// groupPods makes workloads of plain pods: one per pod, or one per Volcano PodGroup
// (annotation scheduling.k8s.io/group-name) or Gantry gang (annotation gantry.dev/gang)
// with one pod set per pod.
func (l *loader) groupPods() {
	groups := map[string]*workloadInput{}
	for _, p := range l.pods {
		group, kind := p.obj.Annotations[api.AnnotationVolcanoGroupName], "PodGroup"
		if group == "" {
			group, kind = p.obj.Annotations[api.AnnotationGangName], "Gang"
		}
		if group == "" {
			w := l.newWorkload(p.obj.ObjectMeta, "v1", "Pod", p.c)
			w.PodSets = []api.PodSet{p.set}
			l.addWorkload(w, nil, p.c)
			continue
		}
		ns := defaultNS(p.obj.Namespace)
		key := kind + "/" + ns + "/" + group
		w, ok := groups[key]
		if !ok {
			m := p.obj.ObjectMeta
			m.Name, m.Namespace = group, ns
			w = l.newWorkload(m, "v1", "Pod", p.c)
			w.Owner = api.OwnerRef{APIVersion: "v1", Kind: kind, Name: group}
			if kind == "PodGroup" {
				w.ext.podGroup = group
			}
			groups[key] = w
			l.addWorkload(w, nil, p.c)
		} else {
			checkSameGroupMeta(w, p)
		}
		w.PodSets = append(w.PodSets, p.set)
	}
}

// checkSameGroupMeta: every pod of a group must name the same queue and priority.
func checkSameGroupMeta(w *workloadInput, p podInput) {
	q := workloadQueue(p.obj.ObjectMeta, p.c)
	if q.name != w.Queue {
		p.c.add(q.field, "queue %q differs from %q of the other pods of group %s", q.name, w.Queue, w.Name)
	}
	if pc := p.obj.Labels[api.LabelKueuePriority]; w.PrioritySource == api.WorkloadPriority && pc != w.PriorityClass {
		p.c.add("metadata.labels["+api.LabelKueuePriority+"]", "priority class %q differs from %q of the other pods of group %s", pc, w.PriorityClass, w.Name)
	}
}

// applyPodGroups links workloads to the Volcano PodGroups their pods name.
func (l *loader) applyPodGroups() {
	for _, w := range l.workloads {
		if w.ext.podGroup == "" {
			continue
		}
		pg, ok := l.podGroups[w.Namespace+"/"+w.ext.podGroup]
		if !ok && operatorPodGroup(w) {
			continue // the job is the gang already
		}
		if !ok {
			w.c.add("", "PodGroup %q (annotation %s) not found in namespace %s", w.ext.podGroup, api.AnnotationVolcanoGroupName, w.Namespace)
			continue
		}
		applyPodGroup(w, pg)
	}
}

// operatorPodGroup: the pods name the PodGroup that the Kubeflow operators create for a
// job under Volcano gang scheduling, named after the job itself. It is not in the
// user's files, and it is the job's own gang (minMember from schedulingPolicy, else all
// pods), which the workload is already.
func operatorPodGroup(w *workloadInput) bool {
	switch w.Owner.Kind {
	case "PyTorchJob", "MPIJob", "TFJob", "XGBoostJob", "PaddleJob", "JAXJob":
		return w.ext.podGroup == w.Owner.Name
	}
	return false
}

// resolveWorkloads checks each workload's queue and priority class and emits it.
func (l *loader) resolveWorkloads() {
	lqs := map[string]bool{}
	for _, q := range l.objs.LocalQueues {
		lqs[q.Key()] = true
	}
	volcano := map[string]bool{}
	for _, q := range l.volcanoQueues {
		volcano[q.in.Name] = true
	}
	classes := map[api.PriorityClassKind]map[string]api.PriorityClass{api.WorkloadPriority: {}, api.PodPriority: {}}
	var globalDefault *api.PriorityClass
	for i, pc := range l.objs.PriorityClasses {
		classes[pc.Kind][pc.Name] = pc
		if pc.Kind == api.PodPriority && pc.GlobalDefault && globalDefault == nil {
			globalDefault = &l.objs.PriorityClasses[i]
		}
	}
	for _, w := range l.workloads {
		l.resolveQueue(w, lqs, volcano)
		resolvePriority(w, classes, globalDefault)
		l.objs.Workloads = append(l.objs.Workloads, w.Workload)
	}
}

// DefaultLocalQueue is the LocalQueue that a workload without a queue label is queued in
// when its namespace has one of this name, as Kueue's LocalQueueDefaulting does (GA and
// always on since Kueue v0.17).
const DefaultLocalQueue = "default"

func (l *loader) resolveQueue(w *workloadInput, lqs, volcano map[string]bool) {
	if w.Queue == "" && lqs[w.Namespace+"/"+DefaultLocalQueue] {
		w.Queue = DefaultLocalQueue
	}
	switch {
	case w.Queue == "":
		w.c.add(w.ext.queueField, "no queue: set label %s (or %s) to a LocalQueue of namespace %s, or give the namespace a LocalQueue %q", api.LabelKueueQueueName, api.LabelGantryQueueName, w.Namespace, DefaultLocalQueue)
	case lqs[w.Namespace+"/"+w.Queue]:
	case w.ext.volcanoQueue && volcano[w.Queue]:
		// A Volcano queue is cluster-scoped: give the namespace a LocalQueue for it.
		lq := api.LocalQueue{Meta: api.Meta{Name: w.Queue, Namespace: w.Namespace, Source: w.Source}, ClusterQueue: w.Queue,
			StopPolicy: api.StopNone, FairSharing: api.FairSharing{WeightMilli: 1000}}
		lqs[lq.Key()] = true
		l.objs.LocalQueues = append(l.objs.LocalQueues, lq)
	case w.ext.volcanoQueue:
		w.c.add(w.ext.queueField, "Volcano Queue %q not found (and no LocalQueue %s/%s)", w.Queue, w.Namespace, w.Queue)
	default:
		w.c.add(w.ext.queueField, "LocalQueue %q not found in namespace %s", w.Queue, w.Namespace)
	}
}

// resolvePriority: the Kueue priority label names a WorkloadPriorityClass; otherwise the
// pods' priorityClassName names a PriorityClass; otherwise the global default applies.
func resolvePriority(w *workloadInput, classes map[api.PriorityClassKind]map[string]api.PriorityClass, globalDefault *api.PriorityClass) {
	if w.PriorityClass == "" {
		if globalDefault != nil {
			w.PriorityClass, w.PrioritySource, w.Priority = globalDefault.Name, api.PodPriority, globalDefault.Value
		}
		return
	}
	pc, ok := classes[w.PrioritySource][w.PriorityClass]
	if !ok {
		w.c.add(w.ext.priorityField, "%s %q not found", w.PrioritySource, w.PriorityClass)
		return
	}
	w.Priority = pc.Value
}
