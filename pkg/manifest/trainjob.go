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
// them are listed.
type trainJobWire struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		RuntimeRef            trainRuntimeRef   `json:"runtimeRef"`
		Initializer           any               `json:"initializer,omitempty"`
		Trainer               *trainJobTrainer  `json:"trainer,omitempty"`
		RuntimePatches        any               `json:"runtimePatches,omitempty"`
		PodTemplateOverrides  any               `json:"podTemplateOverrides,omitempty"`
		PodSpecOverrides      any               `json:"podSpecOverrides,omitempty"`
		Labels                map[string]string `json:"labels,omitempty"`
		Annotations           map[string]string `json:"annotations,omitempty"`
		Suspend               *bool             `json:"suspend,omitempty"`
		ActiveDeadlineSeconds *int64            `json:"activeDeadlineSeconds,omitempty"`
		ManagedBy             *string           `json:"managedBy,omitempty"`
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

// trainJob reads a TrainJob strictly, but cannot make its pods: they are the replicated
// jobs of the JobSet template in the TrainingRuntime or ClusterTrainingRuntime that
// spec.runtimeRef names (initializers and the trainer's "node" job, their node
// selectors, tolerations and other containers), with only the node count and the "node"
// container's resources taken from the TrainJob. Kueue itself builds that JobSet from
// the runtime object (pkg/controller/jobs/trainjob). Gantry does not read the runtime
// kinds yet, so the TrainJob is refused naming the runtime, after its own fields are
// checked.
func (l *loader) trainJob(d document, c errs) {
	var in trainJobWire
	if !decode(d, &in, false, c) {
		return
	}
	runtime := trainRuntimeOf(in.Spec.RuntimeRef, "spec.runtimeRef", c)
	nodes := "the runtime's"
	if t := in.Spec.Trainer; t != nil {
		if t.NumNodes != nil {
			if *t.NumNodes < 1 {
				c.add("spec.trainer.numNodes", "%d: a TrainJob needs at least one node", *t.NumNodes)
			}
			nodes = strconv.Itoa(int(*t.NumNodes))
		}
		if r := t.ResourcesPerNode; r != nil {
			checkResourceList(r.Requests, "spec.trainer.resourcesPerNode.requests", c)
			checkResourceList(r.Limits, "spec.trainer.resourcesPerNode.limits", c)
		}
	}
	if runtime == "" {
		return
	}
	c.add("spec.runtimeRef", "the pods of a TrainJob are those of the JobSet template of %s (with %s nodes in its trainer job), "+
		"and Gantry does not read TrainingRuntime or ClusterTrainingRuntime yet: give the JobSet that runtime makes instead", runtime, nodes)
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
