package manifest

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
)

// AnnotationJobMinParallelism is Kueue's partial-admission annotation on a batch/v1 Job:
// the job may start with this many pods.
const AnnotationJobMinParallelism = "kueue.x-k8s.io/job-min-parallelism"

// job: one pod set of parallelism pods (capped by completions).
func (l *loader) job(d document, c errs) {
	var in batchv1.Job
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "batch/v1", "Job", c)
	w.PodSets = []api.PodSet{jobPodSet("main", in.Spec, 1, "spec", c)}
	if s, ok := in.Annotations[AnnotationJobMinParallelism]; ok {
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil || n <= 0 || int32(n) > w.PodSets[0].Count {
			c.add("metadata.annotations["+AnnotationJobMinParallelism+"]", "%q must be a positive integer no larger than the job's %d pods", s, w.PodSets[0].Count)
		} else {
			w.PodSets[0].MinCount = int32(n)
		}
	}
	templateQueue(w, podTemplate{in.Spec.Template.ObjectMeta, "spec.template"})
	l.addWorkload(w, in.Spec.Template.Annotations, c)
}

// jobPodSet is the pod set of replicas copies of a batch/v1 Job: parallelism pods each
// (default 1), capped by completions.
func jobPodSet(name string, s batchv1.JobSpec, replicas int32, path string, c errs) api.PodSet {
	pods := int32(1)
	if s.Parallelism != nil {
		pods = *s.Parallelism
	}
	if s.Completions != nil && *s.Completions < pods {
		pods = *s.Completions
	}
	if pods < 0 {
		c.add(path+".parallelism", "%d is negative", pods)
		pods = 0
	}
	return podSet(name, mulCount(pods, replicas, path, c), s.Template, path+".template", c)
}

// mulCount multiplies pod counts, reporting (instead of wrapping around) a total that
// does not fit an int32.
func mulCount(a, b int32, path string, c errs) int32 {
	n := int64(a) * int64(b)
	if n > math.MaxInt32 {
		c.add(path, "%d x %d pods is more than any cluster can run", a, b)
		return 0
	}
	return int32(n)
}

// jobSet: one pod set per replicated job, replicas × pods-per-job pods.
func (l *loader) jobSet(d document, c errs) {
	var in jobSetWire
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "jobset.x-k8s.io/v1alpha2", "JobSet", c)
	if len(in.Spec.ReplicatedJobs) == 0 {
		c.add("spec.replicatedJobs", "a JobSet needs at least one replicated job")
	}
	var groupAnn map[string]string
	for i, rj := range in.Spec.ReplicatedJobs {
		p := joinIndex("spec.replicatedJobs", i)
		replicas := int32(1)
		if rj.Replicas != nil {
			replicas = *rj.Replicas
		}
		if replicas < 0 {
			c.add(p+".replicas", "%d is negative", replicas)
			replicas = 0
		}
		if rj.Name == "" {
			c.add(p+".name", "missing replicated job name")
		}
		w.PodSets = append(w.PodSets, jobPodSet(rj.Name, rj.Template.Spec, replicas, p+".template.spec", c))
		if groupAnn == nil {
			groupAnn = rj.Template.Spec.Template.Annotations
		}
	}
	l.addWorkload(w, groupAnn, c)
}

// kubeflowSets converts Kubeflow replica specs in the given role order (e.g. Master,
// Worker); unknown roles are errors.
func kubeflowSets(specs map[string]replicaSpec, roles []string, path string, c errs) []api.PodSet {
	var out []api.PodSet
	known := map[string]bool{}
	for _, role := range roles {
		known[role] = true
		rs, ok := specs[role]
		if !ok {
			continue
		}
		n := int32(1)
		if rs.Replicas != nil {
			n = *rs.Replicas
		}
		out = append(out, podSet(strings.ToLower(role), n, rs.Template, path+"."+role+".template", c))
	}
	var extra []string
	for role := range specs {
		if !known[role] {
			extra = append(extra, role)
		}
	}
	sort.Strings(extra)
	for _, role := range extra {
		c.add(path+"."+role, "unknown replica type %q: want one of %s", role, strings.Join(roles, ", "))
	}
	if len(out) == 0 && len(extra) == 0 {
		c.add(path, "no replica specs: want %s", strings.Join(roles, " and/or "))
	}
	return out
}

// applyRunPolicy takes gang settings from Kubeflow's schedulingPolicy.
func applyRunPolicy(w *api.Workload, rp runPolicy, ext *workloadExtras) {
	sp := rp.SchedulingPolicy
	if sp == nil {
		return
	}
	if sp.MinAvailable != nil && *sp.MinAvailable > 0 {
		w.MinMember = *sp.MinAvailable
	}
	if sp.Queue != "" && w.Queue == "" {
		w.Queue, ext.volcanoQueue = sp.Queue, true
	}
	if sp.PriorityClass != "" && w.PriorityClass == "" {
		w.PriorityClass, w.PrioritySource = sp.PriorityClass, api.PodPriority
	}
}

func (l *loader) pyTorchJob(d document, c errs) {
	var in pyTorchJobWire
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "kubeflow.org/v1", "PyTorchJob", c)
	w.PodSets = kubeflowSets(in.Spec.PyTorchReplicaSpecs, []string{"Master", "Worker"}, "spec.pytorchReplicaSpecs", c)
	applyRunPolicy(&w.Workload, in.Spec.RunPolicy, &w.ext)
	l.addWorkload(w, firstTemplateAnnotations(in.Spec.PyTorchReplicaSpecs, "Master", "Worker"), c)
}

func (l *loader) mpiJob(d document, c errs) {
	var in mpiJobWire
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "kubeflow.org/v2beta1", "MPIJob", c)
	w.PodSets = kubeflowSets(in.Spec.MPIReplicaSpecs, []string{"Launcher", "Worker"}, "spec.mpiReplicaSpecs", c)
	applyRunPolicy(&w.Workload, in.Spec.RunPolicy, &w.ext)
	l.addWorkload(w, firstTemplateAnnotations(in.Spec.MPIReplicaSpecs, "Launcher", "Worker"), c)
}

func firstTemplateAnnotations(specs map[string]replicaSpec, roles ...string) map[string]string {
	for _, r := range roles {
		if rs, ok := specs[r]; ok {
			return rs.Template.Annotations
		}
	}
	return nil
}

// raySets: the head (one pod) and each worker group (replicas × numOfHosts pods, with
// minReplicas × numOfHosts of them in the gang).
func raySets(s rayClusterSpec, path string, c errs) []api.PodSet {
	out := []api.PodSet{podSet("head", 1, s.HeadGroupSpec.Template, path+".headGroupSpec.template", c)}
	seen := map[string]bool{"head": true}
	for i, g := range s.WorkerGroupSpecs {
		p := joinIndex(path+".workerGroupSpecs", i)
		if g.GroupName == "" {
			c.add(p+".groupName", "missing worker group name")
		} else if seen[g.GroupName] {
			c.add(p+".groupName", "worker group %q is listed twice", g.GroupName)
		}
		seen[g.GroupName] = true
		hosts := g.NumOfHosts
		if hosts <= 0 {
			hosts = 1
		}
		replicas := int32(1)
		if g.MinReplicas != nil {
			replicas = *g.MinReplicas
		}
		if g.Replicas != nil {
			replicas = *g.Replicas
		}
		ps := podSet(g.GroupName, mulCount(replicas, hosts, p, c), g.Template, p+".template", c)
		if g.MinReplicas != nil && *g.MinReplicas > 0 && *g.MinReplicas < replicas {
			ps.MinCount = mulCount(*g.MinReplicas, hosts, p+".minReplicas", c)
		}
		if g.MaxReplicas != nil && *g.MaxReplicas < replicas {
			c.add(p+".maxReplicas", "maxReplicas %d is below replicas %d", *g.MaxReplicas, replicas)
		}
		out = append(out, ps)
	}
	return out
}

func (l *loader) rayCluster(d document, c errs) {
	var in rayClusterWire
	if !decode(d, &in, false, c) {
		return
	}
	w := l.newWorkload(in.ObjectMeta, "ray.io/v1", "RayCluster", c)
	w.PodSets = raySets(in.Spec, "spec", c)
	l.addWorkload(w, in.Spec.HeadGroupSpec.Template.Annotations, c)
}

// rayJob: the pods of its rayClusterSpec. A RayJob that runs on an existing cluster
// (clusterSelector) has no pods of its own to schedule: it is skipped with a line
// saying so, as Kueue leaves it alone (the cluster it runs on is the workload).
func (l *loader) rayJob(d document, c errs) {
	var in rayJobWire
	if !decode(d, &in, false, c) {
		return
	}
	onCluster := len(in.Spec.ClusterSelector) > 0
	switch {
	case onCluster && in.Spec.RayClusterSpec != nil:
		c.add("spec.clusterSelector", "a RayJob either makes its cluster (rayClusterSpec) or runs on an existing one (clusterSelector), not both")
		return
	case onCluster:
		// Its pods are the RayCluster's, queued on their own; Kueue does not queue it.
		l.objs.Skipped = append(l.objs.Skipped, api.Skipped{Source: c.src, APIVersion: "ray.io/v1", Kind: "RayJob", Name: c.name,
			Why: "runs on an existing RayCluster (spec.clusterSelector): no pods of its own; load the RayCluster to schedule its pods"})
		return
	case in.Spec.RayClusterSpec == nil:
		c.add("spec.rayClusterSpec", "missing: a RayJob needs rayClusterSpec, or clusterSelector to run on an existing RayCluster")
		return
	}
	w := l.newWorkload(in.ObjectMeta, "ray.io/v1", "RayJob", c)
	w.PodSets = raySets(*in.Spec.RayClusterSpec, "spec.rayClusterSpec", c)
	if t := in.Spec.SubmitterPodTemplate; t != nil && in.Spec.SubmissionMode != "HTTPMode" {
		w.PodSets = append(w.PodSets, podSet("submitter", 1, *t, "spec.submitterPodTemplate", c))
	}
	l.addWorkload(w, in.Spec.RayClusterSpec.HeadGroupSpec.Template.Annotations, c)
}

// pod: plain pods are kept until every file is read, then grouped (resolve.go); the
// pods of a cluster dump that run already are recorded where they run (livepods.go).
func (l *loader) pod(d document, c errs) {
	var in corev1.Pod
	if !decode(d, &in, false, c) {
		return
	}
	c.name = joinName(defaultNS(in.Namespace), in.Name)
	tmpl := corev1.PodTemplateSpec{ObjectMeta: in.ObjectMeta, Spec: in.Spec}
	ps := podSet(in.Name, 1, tmpl, "", c)
	// decode drops status; a dump's phase says whether the pod is finished (livepods.go).
	phase := corev1.PodPhase(d.v.field("status").str("phase"))
	if l.livePod(&in, phase, ps, c) {
		return // finished, unqueued or a job's pod: not a workload of its own
	}
	l.pods = append(l.pods, podInput{obj: in, set: ps, c: c})
}

func defaultNS(ns string) string {
	if ns == "" {
		return DefaultNamespace
	}
	return ns
}
