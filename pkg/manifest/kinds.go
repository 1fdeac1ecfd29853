package manifest

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// handler decodes one document of a known kind and converts it.
type handler func(l *loader, d document, c errs)

// kindEntry is one supported apiVersion/kind pair.
type kindEntry struct {
	apiVersions []string
	kind        string
	h           handler
}

// supportedKinds lists every kind Load reads. It is built on each call: a plain value,
// not a registry that code elsewhere could mutate.
func supportedKinds() []kindEntry {
	// The Kueue queue kinds are read under Kueue's apiVersions and Gantry's, each with its
	// own field names (kueue_versions.go), all by one reader per kind.
	kueueVersions := []string{kueueV1beta1, gantryV1alpha1, kueueV1beta2}
	kueueAlpha := []string{kueueV1alpha1, kueueV1beta1, gantryV1alpha1, kueueV1beta2}
	return append([]kindEntry{
		{kueueVersions, "ResourceFlavor", (*loader).kueue},
		{kueueVersions, "ClusterQueue", (*loader).kueue},
		{kueueVersions, "LocalQueue", (*loader).kueue},
		{kueueAlpha, "Cohort", (*loader).kueue},
		{kueueVersions, "WorkloadPriorityClass", (*loader).kueue},
		{kueueAlpha, "Topology", (*loader).kueue},
		{[]string{"gantry.dev/v1alpha1"}, "NodePool", (*loader).nodePool},
		{[]string{"gantry.dev/v1alpha1"}, "ClusterEvent", (*loader).clusterEvent},
		{[]string{"scheduling.volcano.sh/v1beta1"}, "Queue", (*loader).volcanoQueue},
		{[]string{"scheduling.volcano.sh/v1beta1"}, "PodGroup", (*loader).podGroup},
		{[]string{VolcanoJobAPIVersion}, "Job", (*loader).vcJob},
		{[]string{api.HyperNodeAPIVersion}, "HyperNode", (*loader).hyperNode},
		{[]string{"scheduling.k8s.io/v1"}, "PriorityClass", (*loader).priorityClass},
		{[]string{"batch/v1"}, "Job", (*loader).job},
		{[]string{"jobset.x-k8s.io/v1alpha2"}, "JobSet", (*loader).jobSet},
		{[]string{"kubeflow.org/v1"}, "PyTorchJob", (*loader).pyTorchJob},
		{[]string{"kubeflow.org/v2beta1"}, "MPIJob", (*loader).mpiJob},
		{[]string{"kubeflow.org/v1"}, "MPIJob", (*loader).mpiJobV1},
		{[]string{"kubeflow.org/v1"}, "TFJob", (*loader).tfJob},
		{[]string{"kubeflow.org/v1"}, "XGBoostJob", (*loader).xgboostJob},
		{[]string{"kubeflow.org/v1"}, "PaddleJob", (*loader).paddleJob},
		{[]string{"kubeflow.org/v1"}, "JAXJob", (*loader).jaxJob},
		{[]string{TrainerAPIVersion}, "TrainJob", (*loader).trainJob},
		{[]string{TrainerAPIVersion}, "TrainingRuntime", (*loader).trainingRuntime},
		{[]string{TrainerAPIVersion}, "ClusterTrainingRuntime", (*loader).clusterTrainingRuntime},
		{[]string{LWSAPIVersion}, "LeaderWorkerSet", (*loader).leaderWorkerSet},
		{[]string{"apps/v1"}, "Deployment", (*loader).deployment},
		{[]string{"apps/v1"}, "StatefulSet", (*loader).statefulSet},
		{[]string{"apps/v1"}, "ReplicaSet", (*loader).replicaSet},
		{[]string{"ray.io/v1"}, "RayJob", (*loader).rayJob},
		{[]string{"ray.io/v1"}, "RayCluster", (*loader).rayCluster},
		{[]string{"v1"}, "Pod", (*loader).pod},
		{[]string{"v1"}, "Node", (*loader).node},
		{[]string{"v1"}, "Namespace", (*loader).namespace},
	}, append(draKinds(), admissionCheckKinds()...)...)
}

// lookupKind finds the handler of apiVersion/kind, or says which field is wrong and why.
func lookupKind(apiVersion, kind string) (handler, string, string) {
	var versionsOfKind []string
	// sameGroup: the kind is read under another version of this group. A kind of the
	// same name in another group only (KAI's Queue, JobSet's Configuration) is another
	// kind, and unsupported.
	knownVersion, sameGroup := false, false
	for _, e := range supportedKinds() {
		for _, v := range e.apiVersions {
			if v == apiVersion {
				knownVersion = true
				if e.kind == kind {
					return e.h, "", ""
				}
			}
			if e.kind == kind {
				versionsOfKind = append(versionsOfKind, v)
				sameGroup = sameGroup || splitGroup(v) == splitGroup(apiVersion)
			}
		}
	}
	if sameGroup {
		return nil, "apiVersion", fmt.Sprintf("kind %s is not read under apiVersion %q; supported: %s%s", kind, apiVersion, strings.Join(versionsOfKind, ", "), versionHint(apiVersion))
	}
	if knownVersion {
		return nil, "kind", fmt.Sprintf("unknown kind %q for apiVersion %s; supported: %s", kind, apiVersion, strings.Join(kindsOf(apiVersion), ", "))
	}
	return nil, "kind", fmt.Sprintf("unsupported apiVersion/kind %s %s%s", apiVersion, kind, unsupportedHint(apiVersion))
}

// unsupportedHint says, for the groups next to Volcano's that its examples use, why
// Gantry does not read them and what to give it instead.
func unsupportedHint(apiVersion string) string {
	switch splitGroup(apiVersion) {
	case "flow.volcano.sh":
		return "; Volcano's JobFlow runs the vcjobs of its JobTemplates one after another, which Gantry does not model: give it the jobs as " + VolcanoJobAPIVersion + " Job"
	case "scheduling.incubator.k8s.io":
		return "; this is kube-batch's group, which Volcano replaced with scheduling.volcano.sh/v1beta1 (which keeps the fields of its PodGroup and Queue): change apiVersion"
	}
	return ""
}

// kindsOf lists the kinds read under one apiVersion, sorted.
func kindsOf(apiVersion string) []string {
	var out []string
	if apiVersion == "v1" {
		out = append(out, "List")
	}
	for _, e := range supportedKinds() {
		for _, v := range e.apiVersions {
			if v == apiVersion {
				out = append(out, e.kind)
			}
		}
	}
	sort.Strings(out)
	return out
}

// SupportedKinds returns "apiVersion kind" for every kind Load reads, sorted (for docs
// and `gantry validate --help`).
func SupportedKinds() []string {
	out := []string{"v1 List"}
	for _, e := range supportedKinds() {
		for _, v := range e.apiVersions {
			out = append(out, v+" "+e.kind)
		}
	}
	sort.Strings(out)
	return out
}
