package manifest

import (
	"github.com/gantry-sched/gantry/pkg/api"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Kubeflow Trainer v2's runtimes (trainer.kubeflow.org/v1alpha1 TrainingRuntime and
// ClusterTrainingRuntime, trainer v2.0 pkg/apis/trainer/v1alpha1): the JobSet template
// whose replicated jobs are the pods of every TrainJob that names the runtime. They make
// no workload of their own; trainjob.go reads them when it resolves a TrainJob.

// trainerAncestorLabel marks the replicated job a runtime step belongs to; the job
// labelled "trainer" is the one the TrainJob's numNodes and resourcesPerNode apply to.
const (
	trainerAncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step"
	trainerAncestor      = "trainer"
	// trainerNodeContainer is the container resourcesPerNode replaces the resources of.
	trainerNodeContainer = "node"
)

// trainRuntimeWire is TrainingRuntime and ClusterTrainingRuntime (one spec for both).
type trainRuntimeWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		MLPolicy       *mlPolicyWire `json:"mlPolicy,omitempty"`
		PodGroupPolicy *struct {
			Coscheduling *struct {
				ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
			} `json:"coscheduling,omitempty"`
			Volcano any `json:"volcano,omitempty"` // Trainer v2.1
		} `json:"podGroupPolicy,omitempty"`
		Template struct {
			metav1.ObjectMeta `json:"metadata,omitempty"`
			Spec              jobSetSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

// mlPolicyWire is the runtime's MLPolicy: the default node count and the framework.
type mlPolicyWire struct {
	NumNodes *int32 `json:"numNodes,omitempty"`
	Torch    *struct {
		NumProcPerNode any `json:"numProcPerNode,omitempty"` // a number, or "auto"
		ElasticPolicy  any `json:"elasticPolicy,omitempty"`
	} `json:"torch,omitempty"`
	MPI *struct {
		NumProcPerNode    *int32  `json:"numProcPerNode,omitempty"`
		MPIImplementation *string `json:"mpiImplementation,omitempty"`
		SSHAuthMountPath  *string `json:"sshAuthMountPath,omitempty"`
		RunLauncherAsNode *bool   `json:"runLauncherAsNode,omitempty"`
	} `json:"mpi,omitempty"`
}

// trainRuntime is a runtime read, waiting for the TrainJobs that name it.
type trainRuntime struct {
	in trainRuntimeWire
	c  errs
}

// trainerInputs are the runtimes (keyed by runtimeKey) and the TrainJobs, resolved
// together once every file is read.
type trainerInputs struct {
	runtimes map[string]*trainRuntime
	jobs     []trainJobInput
}

// runtimeKey identifies a runtime: "ClusterTrainingRuntime/name" (cluster-scoped) or
// "TrainingRuntime/namespace/name".
func runtimeKey(kind, namespace, name string) string {
	if kind == "ClusterTrainingRuntime" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

func (l *loader) trainingRuntime(d document, c errs) {
	l.readTrainRuntime(d, "TrainingRuntime", c)
}

func (l *loader) clusterTrainingRuntime(d document, c errs) {
	l.readTrainRuntime(d, "ClusterTrainingRuntime", c)
}

// readTrainRuntime reads a runtime strictly and checks its JobSet template once, here,
// so that its errors are reported once however many TrainJobs name it.
func (l *loader) readTrainRuntime(d document, kind string, c errs) {
	var in trainRuntimeWire
	if !decode(d, &in, false, c) {
		return
	}
	m := metaOf(in.ObjectMeta, c.src, DefaultNamespace)
	if kind == "ClusterTrainingRuntime" {
		m.Namespace = "" // cluster-scoped
	}
	c.name = m.Key()
	if !l.register(kind, m, c) || !checkRuntimeTemplate(in, c) {
		return
	}
	if l.trainer.runtimes == nil {
		l.trainer.runtimes = map[string]*trainRuntime{}
	}
	l.trainer.runtimes[runtimeKey(kind, m.Namespace, m.Name)] = &trainRuntime{in: in, c: c}
}

// checkRuntimeTemplate reports what no TrainJob could make right: no replicated jobs, a
// node count below one, and anything wrong in the pod templates.
func checkRuntimeTemplate(in trainRuntimeWire, c errs) bool {
	before := len(*c.list)
	if p := in.Spec.MLPolicy; p != nil && p.NumNodes != nil && *p.NumNodes < 1 {
		c.add("spec.mlPolicy.numNodes", "%d: a runtime runs on at least one node", *p.NumNodes)
	}
	if p := in.Spec.MLPolicy; p != nil && p.Torch != nil && p.MPI != nil {
		c.add("spec.mlPolicy", "torch and mpi are exclusive: a runtime has one framework")
	}
	jobs := in.Spec.Template.Spec.ReplicatedJobs
	if len(jobs) == 0 {
		c.add("spec.template.spec.replicatedJobs", "a runtime needs at least one replicated job")
	}
	seen := map[string]bool{}
	for i, rj := range jobs {
		p := joinIndex("spec.template.spec.replicatedJobs", i)
		switch {
		case rj.Name == "":
			c.add(p+".name", "missing replicated job name")
		case seen[rj.Name]:
			c.add(p+".name", "replicated job %q is listed twice", rj.Name)
		}
		seen[rj.Name] = true
		replicas := int32(1)
		if rj.Replicas != nil && !isTrainerJob(rj) { // Trainer runs one replica of the trainer job
			replicas = *rj.Replicas
		}
		if replicas < 0 {
			c.add(p+".replicas", "%d is negative", replicas)
			replicas = 0
		}
		jobPodSet(rj.Name, rj.Template.Spec, replicas, p+".template.spec", c)
	}
	return len(*c.list) == before
}

// podSetsOf is the pod sets of a TrainJob on this runtime, as Trainer v2.0 builds the
// JobSet (pkg/runtime/core and the jobset, torch, mpi and plainml plugins) and Kueue
// then counts it: each replicated job is a pod set of its name; the trainer job runs
// one replica of the runtime's mlPolicy.numNodes pods, or the TrainJob's numNodes
// (for MPI: the "node" job gets them, less one when the launcher runs as a node); the
// trainer job's "node" container takes the TrainJob's resourcesPerNode; the TrainJob's
// podSpecOverrides change the node selector and tolerations of the jobs they name.
func (r *trainRuntime) podSetsOf(t *trainJobTrainer, overrides []podSpecOverride, c errs) []api.PodSet {
	var out []api.PodSet
	counts := r.podCounts(t)
	for i, rj := range r.in.Spec.Template.Spec.ReplicatedJobs {
		spec := *rj.Template.Spec.DeepCopy()
		n := counts[i]
		spec.Parallelism, spec.Completions = &n, &n
		applyPodSpecOverrides(rj.Name, &spec.Template.Spec, overrides)
		replicas := int32(1)
		if rj.Replicas != nil && *rj.Replicas >= 0 {
			replicas = *rj.Replicas
		}
		if isTrainerJob(rj) {
			replicas = 1
			applyResourcesPerNode(&spec.Template.Spec, t)
		}
		p := joinIndex("spec.template.spec.replicatedJobs", i) + ".template.spec"
		out = append(out, jobPodSet(rj.Name, spec, replicas, p, c))
	}
	return out
}

// podCounts is the pods of one replica of each replicated job.
func (r *trainRuntime) podCounts(t *trainJobTrainer) []int32 {
	policy := r.in.Spec.MLPolicy
	jobs := r.in.Spec.Template.Spec.ReplicatedJobs
	counts := make([]int32, len(jobs))
	trainer := -1
	for i, rj := range jobs {
		counts[i] = 1
		if rj.Template.Spec.Parallelism != nil {
			counts[i] = *rj.Template.Spec.Parallelism
		}
		if isTrainerJob(rj) && policy != nil {
			counts[i] = 1
			if policy.NumNodes != nil {
				counts[i] = *policy.NumNodes
			}
		}
		if isTrainerJob(rj) && trainer < 0 {
			trainer = i
		}
	}
	if t != nil && t.NumNodes != nil {
		switch {
		case policy != nil && policy.MPI != nil:
			for i, rj := range jobs {
				if rj.Name == trainerNodeContainer {
					counts[i] = *t.NumNodes
					if policy.MPI.RunLauncherAsNode != nil && *policy.MPI.RunLauncherAsNode {
						counts[i] = max(*t.NumNodes-1, 1)
					}
				}
			}
		case trainer >= 0:
			counts[trainer] = *t.NumNodes
		}
	}
	for i := range counts {
		counts[i] = max(counts[i], 1) // Trainer runs at least one pod of every job
	}
	return counts
}

func isTrainerJob(rj replicatedJob) bool {
	return rj.Template.Labels[trainerAncestorLabel] == trainerAncestor
}

// applyResourcesPerNode replaces the "node" container's resources with the TrainJob's,
// as Trainer does (the limits and requests given, nothing of the runtime's kept).
func applyResourcesPerNode(spec *corev1.PodSpec, t *trainJobTrainer) {
	if t == nil || t.ResourcesPerNode == nil || (t.ResourcesPerNode.Limits == nil && t.ResourcesPerNode.Requests == nil) {
		return
	}
	for i := range spec.Containers {
		if spec.Containers[i].Name == trainerNodeContainer {
			spec.Containers[i].Resources = *t.ResourcesPerNode.DeepCopy()
		}
	}
}
