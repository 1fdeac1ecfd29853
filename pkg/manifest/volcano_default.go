package manifest

// Volcano creates its queue "default" at install (weight 1, reclaimable, nothing else)
// and routes every job that names no queue there, so Volcano users never write it. A
// Gantry input with Volcano workloads in that queue then loads as on a Volcano cluster:
// the loader adds a stand-in for it, a weight-only Queue sharing the cluster with the
// other top-level queues. Only when a workload needs it, so that inputs without it
// keep the quota they state:
//   - a workload is routed to "default" by a Volcano field (a vcjob's spec.queue or its
//     default, a PodGroup's, volcano.sh/queue-name, scheduling.volcano.sh/queue-name,
//     a Kubeflow schedulingPolicy.queue), and its namespace has no LocalQueue "default"
//     (which would win, see resolveQueue);
//   - the inputs have no Volcano Queue, ClusterQueue or Cohort named "default".

// implicitVolcanoDefault adds the stand-in for Volcano's default queue when a workload
// needs it. Its problems (no nodes to share) are reported at the first such workload's
// queue field.
func (l *loader) implicitVolcanoDefault() {
	for _, kind := range []string{"Queue", "ClusterQueue", "Cohort"} {
		if _, ok := l.seen[kind+"/"+VolcanoDefaultQueue]; ok {
			return
		}
	}
	local := map[string]bool{}
	for _, q := range l.objs.LocalQueues {
		if q.Name == VolcanoDefaultQueue {
			local[q.Namespace] = true
		}
	}
	for _, w := range l.workloads {
		if w.ext.volcanoQueue && w.Queue == VolcanoDefaultQueue && !local[w.Namespace] {
			l.volcanoQueues = append(l.volcanoQueues, volcanoDefaultStandIn(w))
			return
		}
	}
}

// volcanoDefaultStandIn is Volcano's default queue as its installation creates it.
func volcanoDefaultStandIn(w *workloadInput) volcanoQueue {
	reclaimable := true
	var in volcanoQueueWire
	in.APIVersion, in.Kind, in.Name = "scheduling.volcano.sh/v1beta1", "Queue", VolcanoDefaultQueue
	in.Spec.Weight, in.Spec.Reclaimable = 1, &reclaimable
	field := w.ext.queueField
	if field == "" {
		field = "metadata"
	}
	return volcanoQueue{in: in, c: w.c, implicitField: field}
}
