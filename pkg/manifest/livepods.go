package manifest

import (
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Pods of a cluster dump (`kubectl get pods -A -o yaml`) say what runs already. A pod
// bound to a node (spec.nodeName) starts at t=0 where it is (api.LiveState): as a slot of
// its queued workload, or as capacity its node does not have free (DaemonSet, static and
// system pods, which carry no queue label). Succeeded and Failed pods hold nothing and
// are counted, not read.

// annotationDevices is where Gantry's controller records the device IDs a pod was given
// (pkg/controller AnnotationDevices); a dump of a cluster Gantry schedules carries it.
const annotationDevices = "gantry.dev/devices"

// Why an unbound pod that is not a workload of its own is skipped.
const (
	whyUnqueuedPod = "no queue label and not bound to a node: it neither queues nor holds capacity"
	whyJobPod      = "not bound to a node: Gantry schedules the pod's job, not its pods"
)

// livePod records what a pod of a dump holds and reports whether the pod is done with:
// true for a finished pod, a pod without a queue and a pod of a job (none of them is a
// workload of its own); false for a queued pod, which is grouped into its workload as
// before (a bound one is recorded as that workload's slot too).
func (l *loader) livePod(in *corev1.Pod, phase corev1.PodPhase, ps api.PodSet, c errs) bool {
	if phase == corev1.PodSucceeded || phase == corev1.PodFailed {
		l.objs.Live.Finished++
		return true
	}
	owner := jobOwner(in)
	queued := podQueued(in.ObjectMeta)
	bound := in.Spec.NodeName != ""
	switch {
	case !bound && owner != nil:
		l.skipPod(in, c, whyJobPod)
		return true
	case !bound && !queued:
		l.skipPod(in, c, whyUnqueuedPod)
		return true
	case !bound:
		return false
	}
	lp := api.LivePod{Source: c.src, Name: c.name, Node: in.Spec.NodeName, Owner: owner, Requests: ps.Requests,
		Devices: deviceIDs(in.Annotations[annotationDevices])}
	if owner == nil && queued {
		lp.Workload, lp.PodSet = podWorkloadID(in, c), ps.Name
	}
	l.objs.Live.Pods = append(l.objs.Live.Pods, lp)
	return owner != nil || !queued
}

func (l *loader) skipPod(in *corev1.Pod, c errs, why string) {
	l.objs.Skipped = append(l.objs.Skipped, api.Skipped{Source: c.src, APIVersion: "v1", Kind: "Pod", Name: c.name, Why: why})
}

// podQueued: the pod names a queue (Kueue's, Gantry's or Volcano's key) or a group
// (Volcano PodGroup, Gantry gang) that does.
func podQueued(m metav1.ObjectMeta) bool {
	for _, k := range []string{api.LabelKueueQueueName, api.LabelGantryQueueName, LabelVolcanoQueueName} {
		if _, ok := m.Labels[k]; ok {
			return true
		}
	}
	for _, k := range []string{AnnotationVolcanoQueueName, api.AnnotationVolcanoGroupName, api.AnnotationGangName} {
		if _, ok := m.Annotations[k]; ok {
			return true
		}
	}
	return false
}

// podWorkloadID is the workload groupPods makes the pod part of: its group's, else its own.
func podWorkloadID(in *corev1.Pod, c errs) api.WorkloadID {
	ns := defaultNS(in.Namespace)
	for _, k := range []string{api.AnnotationVolcanoGroupName, api.AnnotationGangName} {
		if g := in.Annotations[k]; g != "" {
			return api.WorkloadID(ns + "/" + g)
		}
	}
	return api.WorkloadID(ns + "/" + metaOf(in.ObjectMeta, c.src, DefaultNamespace).Name)
}

// jobOwner is the pod's controller when that is a kind Gantry reads as a workload (a
// Job, JobSet, PyTorchJob, ...); a Node (static pods) or DaemonSet is not. A ReplicaSet
// stands for its Deployment (named by the ReplicaSet's name less the pod-template-hash
// suffix), so the pods of a Deployment in the input are not counted twice.
func jobOwner(in *corev1.Pod) *api.OwnerRef {
	for _, r := range in.OwnerReferences {
		if r.Controller == nil || !*r.Controller || r.Kind == "Node" || r.Kind == "Pod" {
			continue
		}
		if hash := in.Labels["pod-template-hash"]; r.Kind == "ReplicaSet" && hash != "" && strings.HasSuffix(r.Name, "-"+hash) {
			return &api.OwnerRef{APIVersion: "apps/v1", Kind: "Deployment", Name: strings.TrimSuffix(r.Name, "-"+hash)}
		}
		if h, _, _ := lookupKind(r.APIVersion, r.Kind); h != nil {
			return &api.OwnerRef{APIVersion: r.APIVersion, Kind: r.Kind, Name: r.Name}
		}
	}
	return nil
}

func deviceIDs(s string) []string {
	var out []string
	for _, id := range strings.Split(s, ",") {
		if id = strings.TrimSpace(id); id != "" {
			out = append(out, id)
		}
	}
	return out
}

// resolveLivePods runs once every file is read: a bound pod's node must be in the input,
// a pod of a job in the input becomes that job's slot when the job has one pod set and
// all its pods are bound (else the job queues again from t=0 and the pods are left out),
// a pod of a job not in the input only uses capacity, and a queued workload starts bound
// only whole.
func (l *loader) resolveLivePods() {
	if len(l.objs.Live.Pods) == 0 {
		return
	}
	nodes := l.liveNodeNames()
	var kept []api.LivePod
	for _, p := range l.objs.Live.Pods {
		if !nodes[p.Node] {
			l.livePodError(p, "spec.nodeName", "bound to node %q, which is not in the input (add it to the nodes, e.g. `kubectl get nodes -o yaml`)", p.Node)
			continue
		}
		kept = append(kept, p)
	}
	kept = l.attachJobPods(kept)
	l.checkWholeWorkloads(kept)
	l.objs.Live.Pods = kept
}

// liveNodeNames are the nodes of the input: v1 Nodes and the nodes NodePools expand to.
func (l *loader) liveNodeNames() map[string]bool {
	out := map[string]bool{}
	for n := range l.nodeNames {
		out[n] = true
	}
	for _, n := range l.objs.Nodes {
		out[n.Object.Name] = true
	}
	return out
}

func (l *loader) livePodError(p api.LivePod, field, format string, args ...any) {
	errs{list: &l.errs, src: p.Source, kind: "Pod", name: p.Name}.add(field, format, args...)
}

// attachJobPods gives the pods of jobs in the input their slots: the job's only pod set,
// indexed by pod name. Pods of jobs that are not whole (or not one pod set) are dropped
// with one warning line each: the job queues again from t=0.
func (l *loader) attachJobPods(pods []api.LivePod) []api.LivePod {
	jobs := map[api.OwnerRef]*api.Workload{}
	for i := range l.objs.Workloads {
		w := &l.objs.Workloads[i]
		jobs[api.OwnerRef{APIVersion: w.Owner.APIVersion, Kind: w.Owner.Kind, Name: w.Namespace + "/" + w.Owner.Name}] = w
	}
	byJob := map[api.WorkloadID][]int{}
	var out []api.LivePod
	for _, p := range pods {
		if p.Owner == nil {
			out = append(out, p)
			continue
		}
		ns, _, _ := strings.Cut(p.Name, "/")
		w := jobs[api.OwnerRef{APIVersion: p.Owner.APIVersion, Kind: p.Owner.Kind, Name: ns + "/" + p.Owner.Name}]
		if w == nil {
			out = append(out, p) // its job is not in the input: the pod only uses capacity
			continue
		}
		p.Workload = w.ID()
		byJob[w.ID()] = append(byJob[w.ID()], len(out))
		out = append(out, p)
	}
	drop := map[int]bool{}
	for _, id := range slices.Sorted(maps.Keys(byJob)) {
		idx := byJob[id]
		w := l.workload(id)
		if len(w.PodSets) != 1 || int(w.PodSets[0].Count) != len(idx) {
			for _, i := range idx {
				drop[i] = true
				l.skipLive(out[i], "bound, but its "+w.Owner.Kind+" "+w.Name+" is queued again from t=0: Gantry starts a job where it runs only when it has one pod set and all its pods are bound")
			}
			continue
		}
		sort.Slice(idx, func(a, b int) bool { return out[idx[a]].Name < out[idx[b]].Name })
		for n, i := range idx {
			out[i].PodSet, out[i].Index, out[i].Requests = w.PodSets[0].Name, int32(n), w.PodSets[0].Requests
		}
	}
	kept := out[:0]
	for i, p := range out {
		if !drop[i] {
			kept = append(kept, p)
		}
	}
	return kept
}

func (l *loader) skipLive(p api.LivePod, why string) {
	l.objs.Skipped = append(l.objs.Skipped, api.Skipped{Source: p.Source, APIVersion: "v1", Kind: "Pod", Name: p.Name, Why: why})
}

func (l *loader) workload(id api.WorkloadID) *api.Workload {
	for i := range l.objs.Workloads {
		if l.objs.Workloads[i].ID() == id {
			return &l.objs.Workloads[i]
		}
	}
	return nil
}

// checkWholeWorkloads: a queued workload starts at t=0 with all its pods or queues with
// none; a gang caught half bound is an error naming what is missing.
func (l *loader) checkWholeWorkloads(pods []api.LivePod) {
	bound := map[api.WorkloadID]int{}
	first := map[api.WorkloadID]api.LivePod{}
	for _, p := range pods {
		if p.Workload == "" || p.Owner != nil {
			continue
		}
		if _, ok := first[p.Workload]; !ok {
			first[p.Workload] = p
		}
		bound[p.Workload]++
	}
	for _, id := range slices.Sorted(maps.Keys(bound)) {
		w := l.workload(id)
		if w == nil {
			continue // the workload had errors of its own
		}
		total := 0
		for _, ps := range w.PodSets {
			total += int(ps.Count)
		}
		if n := bound[id]; n != total {
			l.livePodError(first[id], "spec.nodeName", "%d of the %d pods of workload %s are bound: Gantry starts a workload where it runs only with all its pods bound (bind or remove the others)", n, total, id)
		}
	}
}
