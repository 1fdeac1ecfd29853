package manifest

import (
	"math"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
)

type podGroupInput struct {
	in volcanoPodGroupWire
	// topology is spec.networkTopology as a request (nil when absent or invalid).
	topology *api.TopologyRequest
	c        errs
}

func (l *loader) podGroup(d document, c errs) {
	var in volcanoPodGroupWire
	if !decode(d, &in, false, c) {
		return
	}
	m := metaOf(in.ObjectMeta, c.src, DefaultNamespace)
	c.name = m.Key()
	s := in.Spec
	if s.MinMember < 0 {
		c.add("spec.minMember", "%d is negative", s.MinMember)
	}
	for _, k := range sortedKeys(s.MinTaskMember) {
		if v := s.MinTaskMember[k]; v < 0 {
			c.add(joinKey("spec.minTaskMember", k), "%d is negative", v)
		}
	}
	// minResources is Volcano's enqueue gate (the queue must have that much left before
	// any pod is considered). Gantry admits a workload by the requests of its gang pods,
	// which is what Volcano's job controller writes here, so the value is checked, not used.
	for _, n := range sortedNames(s.MinResources) {
		quantity(n, s.MinResources[corev1.ResourceName(n)], joinKey("spec.minResources", string(n)), c)
	}
	pg := &podGroupInput{in: in, c: c}
	if nt := s.NetworkTopology; nt != nil {
		if pg.topology = volcanoTopology(*nt, "spec.networkTopology", c); pg.topology != nil {
			l.trackVolcano(*nt, "spec.networkTopology", c, pg.topology)
		}
	}
	if l.register("PodGroup", m, c) {
		l.podGroups[m.Key()] = pg
	}
}

// applyPodGroup gives a workload its Volcano PodGroup's gang (minMember, minTaskMember),
// queue, priority and network topology.
func applyPodGroup(w *workloadInput, pg *podGroupInput) {
	s := pg.in.Spec
	switch {
	case len(s.MinTaskMember) > 0:
		applyMinTaskMember(w, pg)
	case s.MinMember > 0:
		w.MinMember = s.MinMember
	}
	if w.Queue == "" {
		w.Queue, w.ext.volcanoQueue = s.Queue, true
		if w.Queue == "" {
			w.Queue = VolcanoDefaultQueue
		}
		w.ext.queueField = "PodGroup " + pg.c.name + " spec.queue"
	}
	if w.PriorityClass == "" && s.PriorityClassName != "" {
		w.PriorityClass, w.PrioritySource = s.PriorityClassName, api.PodPriority
		w.ext.priorityField = "PodGroup " + pg.c.name + " spec.priorityClassName"
	}
	if pg.topology != nil {
		for i := range w.PodSets {
			if w.PodSets[i].Topology == nil {
				t := *pg.topology
				w.PodSets[i].Topology = &t
			}
		}
	}
}

// applyMinTaskMember: Volcano keys minTaskMember by task, and the pod sets of a job kind
// are its tasks (Job "main", the Kubeflow roles, the Ray groups). A group of plain pods
// has one pod set per pod and does not keep which task a pod belongs to; its entries
// are checked but only minMember makes its gang.
func applyMinTaskMember(w *workloadInput, pg *podGroupInput) {
	s := pg.in.Spec
	plainPods := w.Owner.APIVersion == "v1"
	index := map[string]int{}
	names := make([]string, len(w.PodSets))
	for i, ps := range w.PodSets {
		index[ps.Name], names[i] = i, ps.Name
	}
	mins := make([]int32, len(w.PodSets))
	var sum int64
	for _, k := range sortedKeys(s.MinTaskMember) {
		v, path := s.MinTaskMember[k], joinKey("spec.minTaskMember", k)
		i, ok := index[k]
		switch {
		case v < 0: // reported when read
		case !ok && plainPods:
		case !ok:
			pg.c.add(path, "names no pod set of %s %s (its pod sets: %s)", w.Owner.Kind, w.Key(), strings.Join(names, ", "))
		case v > w.PodSets[i].Count:
			pg.c.add(path, "%d is more than the %d pods of pod set %s of %s", v, w.PodSets[i].Count, k, w.Key())
		default:
			mins[i] = v
			sum += int64(v)
		}
	}
	minMember := s.MinMember
	if minMember <= 0 {
		minMember = int32(min(max(sum, 1), math.MaxInt32))
	}
	volcanoGang(&w.Workload, minMember, mins)
}
