package manifest

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// typedDocs are one object of each kind LoadTyped takes, as YAML, in Typed's order.
var typedDocs = []string{
	`{apiVersion: gantry.dev/v1alpha1, kind: ResourceFlavor, metadata: {name: h100}, spec: {nodeLabels: {gpu: h100}, topologyName: dc}}`,
	`{apiVersion: gantry.dev/v1alpha1, kind: Cohort, metadata: {name: org}, spec: {fairSharing: {weight: 2}}}`,
	`{apiVersion: gantry.dev/v1alpha1, kind: ClusterQueue, metadata: {name: batch, annotations: {gantry.dev/placement-scorers: binpack=2}},
	  spec: {cohort: org, queueingStrategy: StrictFIFO, preemption: {withinClusterQueue: LowerPriority},
	  resourceGroups: [{coveredResources: [nvidia.com/gpu], flavors: [{name: h100, resources: [{name: nvidia.com/gpu, nominalQuota: 8, borrowingLimit: 4}]}]}]}}`,
	`{apiVersion: gantry.dev/v1alpha1, kind: LocalQueue, metadata: {name: lq, namespace: team}, spec: {clusterQueue: batch}}`,
	`{apiVersion: gantry.dev/v1alpha1, kind: WorkloadPriorityClass, metadata: {name: high}, value: 1000}`,
	`{apiVersion: gantry.dev/v1alpha1, kind: Topology, metadata: {name: dc}, spec: {levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]}}`,
	`{apiVersion: v1, kind: Namespace, metadata: {name: team, labels: {team: a}}}`,
}

// typedOf decodes typedDocs into the types a Kubernetes client holds.
func typedOf(t *testing.T) Typed {
	t.Helper()
	in := Typed{Flavors: []*v1alpha1.ResourceFlavor{{}}, Cohorts: []*v1alpha1.Cohort{{}},
		ClusterQueues: []*v1alpha1.ClusterQueue{{}}, LocalQueues: []*v1alpha1.LocalQueue{{}},
		WorkloadPriorityClasses: []*v1alpha1.WorkloadPriorityClass{{}}, Topologies: []*v1alpha1.Topology{{}},
		Namespaces: []*corev1.Namespace{{}}}
	into := []any{in.Flavors[0], in.Cohorts[0], in.ClusterQueues[0], in.LocalQueues[0],
		in.WorkloadPriorityClasses[0], in.Topologies[0], in.Namespaces[0]} // typedDocs' order
	for i, d := range typedDocs {
		if err := yaml.Unmarshal([]byte(d), into[i]); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// zeroSources zeroes every api.Source inside v, the one thing the two paths set
// differently.
func zeroSources(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			zeroSources(v.Elem())
		}
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[api.Source]() {
			v.SetZero()
			return
		}
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				zeroSources(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			zeroSources(v.Index(i))
		}
	}
}

// TestLoadTypedMatchesLoad: typed objects convert exactly as the same objects in YAML.
func TestLoadTypedMatchesLoad(t *testing.T) {
	fromYAML, err := LoadBytes("in.yaml", []byte("---\n"+strings.Join(typedDocs, "\n---\n")))
	if err != nil {
		t.Fatal(err)
	}
	fromTyped, err := LoadTyped("cluster", typedOf(t))
	if err != nil {
		t.Fatal(err)
	}
	if got := fromTyped.ClusterQueues[0].Source.String(); got != "cluster" {
		t.Errorf("source = %q, want cluster", got)
	}
	zeroSources(reflect.ValueOf(fromYAML))
	zeroSources(reflect.ValueOf(fromTyped))
	if !reflect.DeepEqual(fromYAML, fromTyped) {
		t.Errorf("LoadTyped differs from LoadBytes:\n typed %+v\n  yaml %+v", fromTyped, fromYAML)
	}
}

// TestLoadTypedErrorsNameObjectAndField: problems come back as an ErrorList, each with
// the kind, name and field, the reference checks included.
func TestLoadTypedErrorsNameObjectAndField(t *testing.T) {
	in := typedOf(t)
	in.ClusterQueues[0].Spec.QueueingStrategy = "Random"
	in.LocalQueues[0].Spec.ClusterQueue = "missing"
	_, err := LoadTyped("cluster", in)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("error %v is not an ErrorList", err)
	}
	want := []string{
		`cluster: ClusterQueue batch: spec.queueingStrategy: unknown value "Random": want StrictFIFO or BestEffortFIFO`,
		`cluster: LocalQueue team/lq: spec.clusterQueue: ClusterQueue "missing" not found`,
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCheckTypedLeavesReferences: CheckTyped reports an object's own problems, with
// kind, name and field, and none about objects it names that are not there (they may
// be created after it).
func TestCheckTypedLeavesReferences(t *testing.T) {
	in := typedOf(t)
	in.ClusterQueues[0].Spec.QueueingStrategy = "Random"
	in.LocalQueues[0].Spec.ClusterQueue = "missing"
	err := CheckTyped("webhook", Typed{ClusterQueues: in.ClusterQueues, LocalQueues: in.LocalQueues})
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 1 ||
		list[0].Error() != `webhook: ClusterQueue batch: spec.queueingStrategy: unknown value "Random": want StrictFIFO or BestEffortFIFO` {
		t.Fatalf("CheckTyped = %v; want only the queueing strategy", err)
	}
	in = typedOf(t)
	if err := CheckTyped("webhook", Typed{LocalQueues: in.LocalQueues}); err != nil {
		t.Errorf("a LocalQueue whose ClusterQueue is not created yet: %v", err)
	}
}
