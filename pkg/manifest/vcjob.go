package manifest

import (
	"math"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	"k8s.io/apimachinery/pkg/util/validation"
)

// VolcanoJobAPIVersion is the apiVersion of Volcano's Job (vcjob).
const VolcanoJobAPIVersion = "batch.volcano.sh/v1alpha1"

// volcanoSchedulerName is what Volcano's webhook writes into an empty spec.schedulerName.
const volcanoSchedulerName = "volcano"

// vcJob: one pod set per task (replicas pods, minAvailable of them in the gang), the gang
// as Volcano's PodGroup for the job counts it, the job's Volcano queue and priority.
// The lifecycle fields (policies, maxRetry, minSuccess, plugins, volumes, dependsOn,
// partitionPolicy) are checked as Volcano's webhook checks them (vcjob_check.go).
func (l *loader) vcJob(d document, c errs) {
	var in vcJobWire
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, VolcanoJobAPIVersion, "Job", c)
	s := in.Spec
	if len(s.Tasks) == 0 {
		w.c.add("spec.tasks", "a Volcano Job needs at least one task")
	}
	scheduler := s.SchedulerName
	if scheduler == "" {
		scheduler = volcanoSchedulerName
	}
	mins := make([]int32, 0, len(s.Tasks))
	for i, t := range s.Tasks {
		ps, m := vcTaskSet(t, i, scheduler, w.c)
		w.PodSets = append(w.PodSets, ps)
		mins = append(mins, m)
	}
	checkVCJob(s, w.PodSets, w.c)
	vcJobGang(&w.Workload, s.MinAvailable, mins, w.c)
	vcJobQueue(w, s.Queue)
	if w.PriorityClass == "" && s.PriorityClassName != "" {
		w.PriorityClass, w.PrioritySource = s.PriorityClassName, api.PodPriority
		w.ext.priorityField = "spec.priorityClassName"
	}
	if nt := s.NetworkTopology; nt != nil {
		if t := volcanoTopology(*nt, "spec.networkTopology", w.c); t != nil {
			var reqs []*api.TopologyRequest
			for i := range w.PodSets {
				if w.PodSets[i].Topology == nil {
					tc := *t
					w.PodSets[i].Topology = &tc
					reqs = append(reqs, &tc)
				}
			}
			l.trackVolcano(*nt, "spec.networkTopology", w.c, reqs...)
		}
	}
	// runningEstimate is the user's expected run time: the simulator's duration unless
	// gantry.dev/duration says otherwise.
	if r := s.RunningEstimate; r != nil && w.Timing.Duration == 0 {
		if r.Duration < 0 {
			w.c.add("spec.runningEstimate", "%s is negative", r.Duration)
		} else {
			w.Timing.Duration = r.Duration
		}
	}
	// A vcjob's pods join the PodGroup Volcano makes for it, never one named by a
	// template annotation, so no template annotations are passed on.
	l.addWorkload(w, nil, w.c)
}

// vcTaskSet converts one task into a pod set and returns its minimum (minAvailable,
// default replicas, as Volcano's webhook fills it in).
func vcTaskSet(t vcTask, i int, scheduler string, c errs) (api.PodSet, int32) {
	p := joinIndex("spec.tasks", i)
	name := t.Name
	if name == "" {
		name = "default" + strconv.Itoa(i) // Volcano's name for an unnamed task
	} else if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		c.add(p+".name", "%q is not a valid task name: %s", name, msgs[0])
	}
	replicas := t.Replicas
	if replicas < 0 {
		c.add(p+".replicas", "%d is negative", replicas)
		replicas = 0
	}
	ps := podSet(name, replicas, t.Template, p+".template", c)
	if ps.SchedulerName == "" {
		ps.SchedulerName = scheduler
	}
	minimum := replicas
	if m := t.MinAvailable; m != nil {
		switch {
		case *m < 0:
			c.add(p+".minAvailable", "%d is negative", *m)
		case *m > replicas:
			c.add(p+".minAvailable", "%d is more than the task's %d replicas", *m, replicas)
		default:
			minimum = *m
		}
	}
	checkVCTask(t, p, c)
	return ps, minimum
}

// vcJobGang: spec.minAvailable (default: the sum of the tasks' minimums, as Volcano's
// webhook fills it in) pods in all, each task's minimum within them (volcanoGang).
func vcJobGang(w *api.Workload, minAvailable int32, mins []int32, c errs) {
	var total, sum int64
	for i, ps := range w.PodSets {
		total += int64(ps.Count)
		sum += int64(mins[i])
	}
	if total > math.MaxInt32 {
		c.add("spec.tasks", "%d pods in all is more than any cluster can run", total)
		return
	}
	switch {
	case minAvailable < 0:
		c.add("spec.minAvailable", "%d is negative", minAvailable)
		minAvailable = int32(sum)
	case int64(minAvailable) > total:
		c.add("spec.minAvailable", "%d is more than the %d replicas of all tasks", minAvailable, total)
		minAvailable = int32(total)
	case minAvailable == 0:
		minAvailable = int32(sum)
	}
	if total == 0 {
		return
	}
	// A job whose tasks all have minAvailable 0 has no gang in Volcano: each pod may start
	// on its own. The nearest Gantry gang is one pod; the rest follow as they fit.
	volcanoGang(w, max(minAvailable, 1), mins)
}

// vcJobQueue: spec.queue names a Volcano Queue (default "default", as Volcano's webhook
// fills it in). A queue label (Kueue's, Gantry's or Volcano's) routes a vcjob without
// spec.queue; one naming another queue than spec.queue is an error.
func vcJobQueue(w *workloadInput, queue string) {
	switch {
	case queue == "" && w.Queue != "":
		return
	case queue == "":
		queue = VolcanoDefaultQueue
	case w.Queue != "" && w.Queue != queue:
		w.c.add(w.ext.queueField, "%q disagrees with spec.queue %q", w.Queue, queue)
	}
	w.Queue, w.ext.queueField, w.ext.volcanoQueue = queue, "spec.queue", true
}
