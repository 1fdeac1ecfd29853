package manifest

import (
	"maps"
	"slices"
	"strconv"

	"github.com/gantry-sched/gantry/pkg/api"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// LWSAPIVersion is the apiVersion of LeaderWorkerSet.
const LWSAPIVersion = "leaderworkerset.x-k8s.io/v1"

// lwsWire is leaderworkerset.x-k8s.io/v1 LeaderWorkerSet (kubernetes-sigs/lws
// api/leaderworkerset/v1), every spec field listed so strict decoding catches typos.
type lwsWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas             *int32      `json:"replicas,omitempty"`
		LeaderWorkerTemplate lwsTemplate `json:"leaderWorkerTemplate"`
		RolloutStrategy      any         `json:"rolloutStrategy,omitempty"`
		StartupPolicy        string      `json:"startupPolicy,omitempty"`
		NetworkConfig        any         `json:"networkConfig,omitempty"`
	} `json:"spec"`
}

type lwsTemplate struct {
	LeaderTemplate                       *corev1.PodTemplateSpec                                 `json:"leaderTemplate,omitempty"`
	WorkerTemplate                       corev1.PodTemplateSpec                                  `json:"workerTemplate"`
	Size                                 *int32                                                  `json:"size,omitempty"`
	RestartPolicy                        string                                                  `json:"restartPolicy,omitempty"`
	SubGroupPolicy                       any                                                     `json:"subGroupPolicy,omitempty"`
	VolumeClaimTemplates                 []corev1.PersistentVolumeClaim                          `json:"volumeClaimTemplates,omitempty"`
	PersistentVolumeClaimRetentionPolicy *appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy `json:"persistentVolumeClaimRetentionPolicy,omitempty"`
}

// maxExpandedWorkloads bounds how many workloads one object may expand to (one per
// LeaderWorkerSet group or Deployment replica), so a typo of a few digits is an error
// rather than millions of workloads.
const maxExpandedWorkloads = 10000

// leaderWorkerSet: as in Kueue (pkg/controller/jobs/leaderworkerset), each of the
// `replicas` groups (default 1) is its own workload and gang, named after the group's
// leader pod ("<name>-<index>"). A group is `leader`: 1 and `worker`: size-1 with a
// leaderTemplate, else `main`: size pods of the worker template.
func (l *loader) leaderWorkerSet(d document, c errs) {
	var in lwsWire
	if !decode(d, &in, false, c) {
		return
	}
	sets, tmpl := lwsPodSets(in.Spec.LeaderWorkerTemplate, "spec.leaderWorkerTemplate", c)
	groups := replicasOf(in.Spec.Replicas, "spec.replicas", c)
	l.addGroups(in.ObjectMeta, LWSAPIVersion, "LeaderWorkerSet", groups, sets, tmpl, c)
}

// lwsPodSets is the pod sets of one group, and the template that speaks for the group
// (the leader's when there is one).
func lwsPodSets(t lwsTemplate, path string, c errs) ([]api.PodSet, podTemplate) {
	size := int32(1)
	if t.Size != nil {
		size = *t.Size
	}
	if size < 1 {
		c.add(path+".size", "%d: a group needs at least its leader (size >= 1)", size)
		return nil, podTemplate{}
	}
	if t.LeaderTemplate == nil {
		return []api.PodSet{podSet("main", size, t.WorkerTemplate, path+".workerTemplate", c)}, podTemplate{t.WorkerTemplate.ObjectMeta, path + ".workerTemplate"}
	}
	sets := []api.PodSet{podSet("leader", 1, *t.LeaderTemplate, path+".leaderTemplate", c)}
	if size > 1 {
		sets = append(sets, podSet("worker", size-1, t.WorkerTemplate, path+".workerTemplate", c))
	}
	return sets, podTemplate{t.LeaderTemplate.ObjectMeta, path + ".leaderTemplate"}
}

// replicasOf reads an optional replica count (default 1), refusing negative ones and
// ones past maxExpandedWorkloads.
func replicasOf(n *int32, path string, c errs) int {
	if n == nil {
		return 1
	}
	switch {
	case *n < 0:
		c.add(path, "%d is negative", *n)
		return 0
	case *n > maxExpandedWorkloads:
		c.add(path, "%d: each replica is a workload of its own, and Gantry expands at most %d from one object", *n, maxExpandedWorkloads)
		return 0
	}
	return int(*n)
}

// addGroups adds n workloads of the same pod sets from one object, the i-th named
// "<name>-<i>" and owned by the object, each read from the object's metadata (queue,
// priority, timing) as any job's workload is, and from its pod template (the Volcano
// queue and PodGroup of the pods).
func (l *loader) addGroups(m metav1.ObjectMeta, apiVersion, kind string, n int, sets []api.PodSet, tmpl podTemplate, c errs) {
	if len(sets) == 0 {
		return
	}
	base := metaOf(m, c.src, DefaultNamespace).Name
	for i := 0; i < n; i++ {
		gm := m
		gm.Name, gm.GenerateName = base+"-"+strconv.Itoa(i), ""
		if base == "" {
			gm.Name = ""
		}
		w := l.newWorkload(gm, apiVersion, kind, c)
		w.Owner.Name = base
		w.PodSets = clonePodSets(sets)
		templateQueue(w, tmpl)
		l.addWorkload(w, tmpl.meta.Annotations, c)
		if base == "" {
			return // one "missing name" is enough
		}
	}
}

// clonePodSets copies pod sets so that workloads expanded from one object share no maps
// or slices (a later stage may adjust one workload's requests or selectors).
func clonePodSets(sets []api.PodSet) []api.PodSet {
	out := make([]api.PodSet, len(sets))
	for i, ps := range sets {
		ps.Requests = ps.Requests.Clone()
		ps.NodeSelector = maps.Clone(ps.NodeSelector)
		ps.Tolerations = slices.Clone(ps.Tolerations)
		if ps.Affinity != nil {
			ps.Affinity = ps.Affinity.DeepCopy()
		}
		if ps.Topology != nil {
			t := *ps.Topology
			ps.Topology = &t
		}
		out[i] = ps
	}
	return out
}
