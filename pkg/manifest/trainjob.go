package manifest

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TrainerAPIVersion is the apiVersion of Kubeflow Trainer v2's TrainJob.
const TrainerAPIVersion = "trainer.kubeflow.org/v1alpha1"

// trainJobWire is trainer.kubeflow.org/v1alpha1 TrainJob. The spec changed between
// Trainer releases while staying v1alpha1 (labels, annotations and podSpecOverrides in
// v2.0, podTemplateOverrides in v2.1, runtimePatches since), so the fields of all of
// them are listed. runtimePatches is in no Trainer release whose API Gantry can read
// (v2.0.0 is the newest the module proxy serves): it is accepted, not read, not applied.
type trainJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RuntimeRef            trainRuntimeRef       `json:"runtimeRef"`
		Initializer           any                   `json:"initializer,omitempty"`
		Trainer               *trainJobTrainer      `json:"trainer,omitempty"`
		RuntimePatches        any                   `json:"runtimePatches,omitempty"`
		PodTemplateOverrides  []podTemplateOverride `json:"podTemplateOverrides,omitempty"`
		PodSpecOverrides      []podSpecOverride     `json:"podSpecOverrides,omitempty"`
		Labels                map[string]string     `json:"labels,omitempty"`
		Annotations           map[string]string     `json:"annotations,omitempty"`
		Suspend               *bool                 `json:"suspend,omitempty"`
		ActiveDeadlineSeconds *int64                `json:"activeDeadlineSeconds,omitempty"`
		ManagedBy             *string               `json:"managedBy,omitempty"`
	} `json:"spec"`
}

type trainRuntimeRef struct {
	Name     string  `json:"name"`
	APIGroup *string `json:"apiGroup,omitempty"`
	Kind     *string `json:"kind,omitempty"`
}

type trainJobTrainer struct {
	Image            *string                      `json:"image,omitempty"`
	Command          []string                     `json:"command,omitempty"`
	Args             []string                     `json:"args,omitempty"`
	Env              []corev1.EnvVar              `json:"env,omitempty"`
	NumNodes         *int32                       `json:"numNodes,omitempty"`
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`
	NumProcPerNode   any                          `json:"numProcPerNode,omitempty"` // a number, or "auto" before v2.1
}

// trainJobInput is a TrainJob read, waiting for every file to be read so that its
// runtime can be found wherever it is.
type trainJobInput struct {
	in trainJobWire
	// runtime is the runtimeKey of the runtime named, and name how errors name it
	// ("ClusterTrainingRuntime \"torch-distributed\"").
	runtime, name string
	c             errs
}

// trainJob reads a TrainJob strictly. Its pods are the replicated jobs of the JobSet
// template of the TrainingRuntime or ClusterTrainingRuntime that spec.runtimeRef names
// (trainruntime.go), with the node count and the "node" container's resources taken
// from the TrainJob and its overrides applied, as Kueue counts them
// (pkg/controller/jobs/trainjob builds the JobSet with Trainer's own builder). The
// runtime may come in any file, so the TrainJob becomes a workload in
// resolveTrainJobs.
func (l *loader) trainJob(d document, c errs) {
	var in trainJobWire
	if !decode(d, &in, false, c) {
		return
	}
	name := trainRuntimeOf(in.Spec.RuntimeRef, "spec.runtimeRef", c)
	ok := name != ""
	if t := in.Spec.Trainer; t != nil {
		if t.NumNodes != nil && *t.NumNodes < 1 {
			c.add("spec.trainer.numNodes", "%d: a TrainJob needs at least one node", *t.NumNodes)
			ok = false
		}
		if r := t.ResourcesPerNode; r != nil {
			before := len(*c.list)
			checkResourceList(r.Requests, "spec.trainer.resourcesPerNode.requests", c)
			checkResourceList(r.Limits, "spec.trainer.resourcesPerNode.limits", c)
			ok = ok && len(*c.list) == before
		}
	}
	if !ok {
		return
	}
	kind := "ClusterTrainingRuntime"
	if k := in.Spec.RuntimeRef.Kind; k != nil {
		kind = *k
	}
	key := runtimeKey(kind, defaultNS(in.Namespace), in.Spec.RuntimeRef.Name)
	l.trainer.jobs = append(l.trainer.jobs, trainJobInput{in: in, runtime: key, name: name, c: c})
}

// resolveTrainJobs makes each TrainJob a workload of its runtime's pods.
func (l *loader) resolveTrainJobs() {
	for _, j := range l.trainer.jobs {
		r, ok := l.trainer.runtimes[j.runtime]
		if !ok {
			j.c.add("spec.runtimeRef.name", "%s not found: a TrainJob's pods are those of its runtime's JobSet template", j.name)
			continue
		}
		checkOverrideTargets("spec.podSpecOverrides", specOverrideTargets(j.in.Spec.PodSpecOverrides), r, j.name, j.c)
		checkOverrideTargets("spec.podTemplateOverrides", templateOverrideTargets(j.in.Spec.PodTemplateOverrides), r, j.name, j.c)
		// The runtime as this TrainJob runs it: its podTemplateOverrides applied to a
		// copy of the templates (trainjob_templates.go); podSpecOverrides after them.
		r = r.withTemplateOverrides(j.in.Spec.PodTemplateOverrides)
		w := l.newWorkload(j.in.ObjectMeta, TrainerAPIVersion, "TrainJob", j.c)
		// The runtime's templates were checked when it was read and the TrainJob's
		// fields in trainJob, so the conversion finds nothing new to report; should it,
		// the problem is reported at the runtime's lines.
		w.PodSets = r.podSetsOf(j.in.Spec.Trainer, j.in.Spec.PodSpecOverrides, r.c)
		var ann map[string]string // the first job's, as for a JobSet
		if jobs := r.in.Spec.Template.Spec.ReplicatedJobs; len(jobs) > 0 {
			ann = jobs[0].Template.Spec.Template.Annotations
		}
		l.addWorkload(w, ann, j.c)
	}
}

// trainRuntimeOf names the runtime a TrainJob refers to ("ClusterTrainingRuntime
// torch-distributed"), or "" after reporting a bad reference.
func trainRuntimeOf(r trainRuntimeRef, path string, c errs) string {
	kind := "ClusterTrainingRuntime" // Trainer's default
	if r.Kind != nil {
		kind = *r.Kind
	}
	ok := true
	if r.Name == "" {
		c.add(path+".name", "missing: a TrainJob names the runtime it runs on")
		ok = false
	}
	if r.APIGroup != nil && *r.APIGroup != "trainer.kubeflow.org" {
		c.add(path+".apiGroup", "%q: want trainer.kubeflow.org", *r.APIGroup)
		ok = false
	}
	if kind != "ClusterTrainingRuntime" && kind != "TrainingRuntime" {
		c.add(path+".kind", "%q: want ClusterTrainingRuntime or TrainingRuntime", kind)
		ok = false
	}
	if !ok {
		return ""
	}
	return kind + " " + strconv.Quote(r.Name)
}

// checkResourceList reports quantities that are not valid amounts of their resource.
func checkResourceList(rl corev1.ResourceList, path string, c errs) {
	for _, n := range sortedNames(rl) {
		quantity(n, rl[corev1.ResourceName(n)], path+"["+string(n)+"]", c)
	}
}
