package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"sigs.k8s.io/yaml"
)

// clusterCQ is a ClusterQueue as the API server returns it: the fields the Kueue CRD
// defaults, server metadata and a status Kueue's controller wrote; spec holds extra.
func clusterCQ(apiVersion, extra string) map[string]any {
	doc := `apiVersion: ` + apiVersion + `
kind: ClusterQueue
metadata:
  name: gpu
  uid: 0d6f4d8e-1
  resourceVersion: "42"
  generation: 3
  creationTimestamp: "2026-11-26T00:00:00Z"
  managedFields:
  - manager: kubectl
    operation: Apply
spec:
  namespaceSelector: {}
  queueingStrategy: BestEffortFIFO
  stopPolicy: None
  flavorFungibility: {whenCanBorrow: MayStopSearch, whenCanPreempt: TryNextFlavor}
  preemption: {reclaimWithinCohort: Any, withinClusterQueue: LowerPriority, borrowWithinCohort: {policy: Never}}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
` + extra + `status:
  pendingWorkloads: 1
  reservingWorkloads: 2
  flavorsReservation: [{name: h100, resources: [{name: nvidia.com/gpu, total: "4", borrowed: "0"}]}]
  conditions: [{type: Active, status: "True", reason: Ready, message: ok, lastTransitionTime: "2026-11-26T00:00:00Z"}]
`
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		panic(err)
	}
	return obj
}

// TestKueueObjectFromCluster: an object read from a cluster goes through the loader's
// reader of its apiVersion (v1beta2's cohortName, v1beta1's cohort), status and server
// metadata are not read, and a field of the other version is an error naming the
// object and field, without a line.
func TestKueueObjectFromCluster(t *testing.T) {
	for _, tc := range []struct {
		name, apiVersion, extra string
		cohort                  string
		err                     string
	}{
		{name: "v1beta2", apiVersion: kueueV1beta2, extra: "  cohortName: org\n", cohort: "org"},
		{name: "v1beta1", apiVersion: kueueV1beta1, extra: "  cohort: org\n", cohort: "org"},
		{name: "v1beta1 name under v1beta2", apiVersion: kueueV1beta2, extra: "  cohort: org\n",
			err: `cluster: ClusterQueue gpu: spec.cohort: not a field of kueue.x-k8s.io/v1beta2 ClusterQueue: "cohort" is the name in`},
		{name: "unknown field", apiVersion: kueueV1beta2, extra: "  colour: blue\n",
			err: "cluster: ClusterQueue gpu: spec.colour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj, err := KueueObjectFromCluster("cluster", clusterCQ(tc.apiVersion, tc.extra))
			if tc.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.err) {
					t.Fatalf("error = %v, want prefix %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cq, ok := obj.(*v1alpha1.ClusterQueue)
			if !ok {
				t.Fatalf("object = %T", obj)
			}
			if cq.Spec.Cohort != tc.cohort || cq.Generation != 3 || cq.ResourceVersion != "42" || cq.APIVersion != tc.apiVersion {
				t.Errorf("cohort %q generation %d resourceVersion %q apiVersion %q", cq.Spec.Cohort, cq.Generation, cq.ResourceVersion, cq.APIVersion)
			}
			if cq.Spec.Preemption == nil || cq.Spec.Preemption.ReclaimWithinCohort != "Any" {
				t.Errorf("preemption = %+v", cq.Spec.Preemption)
			}
		})
	}
}

// TestKueueObjectFromClusterKinds: every Kueue queue kind converts to its gantry.dev type.
func TestKueueObjectFromClusterKinds(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		want string
	}{
		{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: h100}\nspec: {nodeLabels: {gpu: h100}}\n", "*v1alpha1.ResourceFlavor"},
		{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: lq, namespace: team}\nspec: {clusterQueue: gpu}\nstatus: {pendingWorkloads: 3}\n", "*v1alpha1.LocalQueue"},
		{"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: org}\nspec: {parentName: root}\n", "*v1alpha1.Cohort"},
		{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: WorkloadPriorityClass\nmetadata: {name: high}\nvalue: 1000\n", "*v1alpha1.WorkloadPriorityClass"},
		{"apiVersion: kueue.x-k8s.io/v1beta2\nkind: Topology\nmetadata: {name: dc}\nspec: {levels: [{nodeLabel: kubernetes.io/hostname}]}\n", "*v1alpha1.Topology"},
	} {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(tc.doc), &obj); err != nil {
			t.Fatal(err)
		}
		got, err := KueueObjectFromCluster("cluster", obj)
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		if typ := fmt.Sprintf("%T", got); typ != tc.want {
			t.Errorf("type = %s, want %s", typ, tc.want)
		}
	}
}
