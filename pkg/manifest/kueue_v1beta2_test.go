package manifest

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
)

// Samples in the shape of Kueue's own site/static/examples, written as Kueue v0.15+
// documents them (kueue.x-k8s.io/v1beta2).
const (
	v1beta2SingleClusterQueue = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata:
  name: "default-flavor"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: "cluster-queue"
spec:
  namespaceSelector: {} # match all.
  resourceGroups:
  - coveredResources: ["cpu", "memory"]
    flavors:
    - name: "default-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 9
      - name: "memory"
        nominalQuota: 36Gi
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: "default"
  name: "user-queue"
spec:
  clusterQueue: "cluster-queue"
`
	v1beta2Cohorts = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: h100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: org}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: research}
spec:
  parentName: org
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-a}
spec:
  cohortName: research
  preemption:
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
    withinClusterQueue: LowerPriority
  flavorFungibility:
    whenCanBorrow: MayStopSearch
    whenCanPreempt: MayStopSearch
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 4, lendingLimit: 2}
    - name: a100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec:
  cohortName: org
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    whenCanPreempt: TryNextFlavor
    preference: BorrowingOverPreemption
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4}
`
	v1beta2FairSharing = `apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Cohort
metadata: {name: shared}
spec:
  fairSharing: {weight: "2"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cluster-queue}
spec:
  cohortName: shared
  namespaceSelector: {}
  queueingStrategy: StrictFIFO
  fairSharing: {weight: 500m}
  admissionScope:
    admissionMode: UsageBasedAdmissionFairSharing
  admissionChecksStrategy:
    admissionChecks: []
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources:
      - {name: cpu, nominalQuota: 9}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq-a}
spec:
  clusterQueue: cluster-queue
  fairSharing: {weight: "1"}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: lq-b}
spec:
  clusterQueue: cluster-queue
  stopPolicy: Hold
  fairSharing: {weight: "3"}
`
	v1beta2PriorityAndTopology = `apiVersion: kueue.x-k8s.io/v1beta2
kind: WorkloadPriorityClass
metadata: {name: sample-priority}
value: 10000
description: "Sample priority"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: Topology
metadata: {name: default}
spec:
  levels:
  - nodeLabel: cloud.provider.com/topology-block
  - nodeLabel: kubernetes.io/hostname
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: tas-flavor}
spec:
  nodeLabels: {cloud.provider.com/node-group: tas-group}
  topologyName: default
  tolerations:
  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: tas-cluster-queue}
spec:
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors:
    - name: tas-flavor
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 16}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {namespace: default, name: tas-user-queue}
spec: {clusterQueue: tas-cluster-queue}
`
)

// asV1beta1 rewrites a v1beta2 sample the way a user writes it for v1beta1: line for
// line (so sources agree), with v1beta1's field names and fungibility values.
func asV1beta1(s string) string {
	return strings.NewReplacer(
		"kueue.x-k8s.io/v1beta2", "kueue.x-k8s.io/v1beta1",
		"cohortName:", "cohort:",
		"whenCanBorrow: MayStopSearch", "whenCanBorrow: Borrow",
		"whenCanPreempt: MayStopSearch", "whenCanPreempt: Preempt",
		// v1beta1 still has the plain list beside the strategy.
		"admissionChecksStrategy:\n    admissionChecks: []", "admissionChecks: []\n  admissionChecksStrategy: {}",
	).Replace(s)
}

// TestKueueV1beta2MatchesV1beta1: each sample loads under v1beta2 to the same api
// objects as its v1beta1 spelling, and to the values the sample states.
func TestKueueV1beta2MatchesV1beta1(t *testing.T) {
	job := k8s.MakeJob("default", "train").KueueQueue("tas-user-queue").Priority("sample-priority").GPUs("2").YAML()
	tests := []struct {
		name  string
		input string
		check func(t *testing.T, o *api.Objects)
	}{
		{"single-clusterqueue-setup", v1beta2SingleClusterQueue, func(t *testing.T, o *api.Objects) {
			cq := o.ClusterQueues[0]
			if cq.Cohort != "" || cq.NamespaceSelector == nil || len(cq.ResourceGroups[0].Flavors[0].Resources) != 2 {
				t.Errorf("cluster-queue = %+v", cq)
			}
			if lq := o.LocalQueues[0]; lq.Key() != "default/user-queue" || lq.ClusterQueue != "cluster-queue" {
				t.Errorf("local queue = %+v", lq)
			}
		}},
		{"hierarchical cohorts", v1beta2Cohorts, func(t *testing.T, o *api.Objects) {
			a, b := findCQ(t, o, "team-a"), findCQ(t, o, "team-b")
			if a.Cohort != "research" || b.Cohort != "org" {
				t.Errorf("cohorts = %q, %q; want research, org", a.Cohort, b.Cohort)
			}
			if a.FlavorFungibility != (api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.MayStopSearch}) {
				t.Errorf("team-a fungibility = %+v", a.FlavorFungibility)
			}
			if b.FlavorFungibility != (api.FlavorFungibility{WhenCanBorrow: api.TryNextFlavor, WhenCanPreempt: api.TryNextFlavor}) {
				t.Errorf("team-b fungibility = %+v", b.FlavorFungibility)
			}
			if q := a.ResourceGroups[0].Flavors[0].Resources[0]; q.Nominal != 4 || *q.BorrowingLimit != 4 || *q.LendingLimit != 2 {
				t.Errorf("team-a h100 quota = %+v", q)
			}
			if a.Preemption.ReclaimWithinCohort != api.PreemptAny || *a.Preemption.BorrowWithinCohort.MaxPriorityThreshold != 100 {
				t.Errorf("team-a preemption = %+v", a.Preemption)
			}
			if r := findCohort(t, o, "research"); r.Parent != "org" {
				t.Errorf("research parent = %q, want org", r.Parent)
			}
		}},
		{"fair sharing", v1beta2FairSharing, func(t *testing.T, o *api.Objects) {
			cq := o.ClusterQueues[0]
			if cq.FairSharing.WeightMilli != 500 || !cq.AdmissionFairSharing.Enabled || cq.QueueingStrategy != api.StrictFIFO || cq.Cohort != "shared" {
				t.Errorf("cluster-queue = %+v", cq)
			}
			if w := findCohort(t, o, "shared").FairSharing.WeightMilli; w != 2000 {
				t.Errorf("cohort weight = %d, want 2000", w)
			}
			if lq := o.LocalQueues[1]; lq.FairSharing.WeightMilli != 3000 || lq.StopPolicy != api.StopHold {
				t.Errorf("lq-b = %+v", lq)
			}
		}},
		{"WorkloadPriorityClass and topology", docs(v1beta2PriorityAndTopology, job), func(t *testing.T, o *api.Objects) {
			if pc := o.PriorityClasses[0]; pc.Kind != api.WorkloadPriority || pc.Value != 10000 {
				t.Errorf("priority class = %+v", pc)
			}
			if f := o.Flavors[0]; f.TopologyName != "default" || len(f.Tolerations) != 1 {
				t.Errorf("flavor = %+v", f)
			}
			if tp := o.Topologies[0]; len(tp.Levels) != 2 {
				t.Errorf("topology = %+v", tp)
			}
			if len(o.Workloads) != 1 || o.Workloads[0].Queue != "tas-user-queue" {
				t.Errorf("workloads = %+v", o.Workloads)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			beta2, err := LoadBytes("in.yaml", []byte(tc.input))
			if err != nil {
				t.Fatalf("v1beta2: %v", err)
			}
			tc.check(t, beta2)
			beta1, err := LoadBytes("in.yaml", []byte(asV1beta1(tc.input)))
			if err != nil {
				t.Fatalf("v1beta1: %v", err)
			}
			if !reflect.DeepEqual(beta2, beta1) {
				t.Errorf("v1beta2 and v1beta1 load differently:\nv1beta2 %+v\nv1beta1 %+v", beta2, beta1)
			}
		})
	}
}

func findCQ(t *testing.T, o *api.Objects, name string) api.ClusterQueue {
	t.Helper()
	for _, q := range o.ClusterQueues {
		if q.Name == name {
			return q
		}
	}
	t.Fatalf("no ClusterQueue %s", name)
	return api.ClusterQueue{}
}

func findCohort(t *testing.T, o *api.Objects, name string) api.Cohort {
	t.Helper()
	for _, c := range o.Cohorts {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("no Cohort %s", name)
	return api.Cohort{}
}

// cqDoc is a ClusterQueue of apiVersion with spec lines under a quota-less spec.
func cqDoc(apiVersion, spec string) string {
	return "apiVersion: " + apiVersion + "\nkind: ClusterQueue\nmetadata:\n  name: cq\nspec:\n" + spec
}

// TestKueueVersionErrors: a field or value of another version is an error naming the
// file, the line, the object, the field and what this version calls it; settings
// Gantry cannot honour are refused, not dropped.
func TestKueueVersionErrors(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		wantLine  int
		wantKind  string
		wantField string
		wantMsg   []string
	}{
		{"v1beta1 cohort under v1beta2", cqDoc(kueueV1beta2, "  cohort: org\n"), 6, "ClusterQueue", "spec.cohort",
			[]string{"not a field of kueue.x-k8s.io/v1beta2 ClusterQueue", "gantry.dev/v1alpha1 and kueue.x-k8s.io/v1beta1", "write spec.cohortName"}},
		{"v1beta2 cohortName under v1beta1", cqDoc(kueueV1beta1, "  cohortName: org\n"), 6, "ClusterQueue", "spec.cohortName",
			[]string{"not a field of kueue.x-k8s.io/v1beta1", `"cohortName" is the name in kueue.x-k8s.io/v1beta2`, "write spec.cohort"}},
		{"cohortName under gantry.dev", cqDoc(gantryV1alpha1, "  cohortName: org\n"), 6, "ClusterQueue", "spec.cohortName",
			[]string{"not a field of gantry.dev/v1alpha1", "write spec.cohort"}},
		{"cohortName of the wrong type", cqDoc(kueueV1beta2, "  cohortName: [org]\n"), 6, "ClusterQueue", "spec.cohortName",
			[]string{"wrong type: expected a string"}},
		{"admissionChecks under v1beta2", cqDoc(kueueV1beta2, "  admissionChecks: [prov]\n"), 6, "ClusterQueue", "spec.admissionChecks",
			[]string{"not a field of kueue.x-k8s.io/v1beta2", "write spec.admissionChecksStrategy.admissionChecks"}},
		{"Borrow under v1beta2", cqDoc(kueueV1beta2, "  flavorFungibility:\n    whenCanBorrow: Borrow\n"), 7, "ClusterQueue", "spec.flavorFungibility.whenCanBorrow",
			[]string{`"Borrow" is the kueue.x-k8s.io/v1beta1 spelling`, "write MayStopSearch"}},
		{"Preempt under v1beta2", cqDoc(kueueV1beta2, "  flavorFungibility:\n    whenCanPreempt: Preempt\n"), 7, "ClusterQueue", "spec.flavorFungibility.whenCanPreempt",
			[]string{"write MayStopSearch"}},
		{"unknown fungibility value under v1beta2", cqDoc(kueueV1beta2, "  flavorFungibility:\n    whenCanPreempt: Later\n"), 7, "ClusterQueue", "spec.flavorFungibility.whenCanPreempt",
			[]string{`unknown value "Later": want MayStopSearch or TryNextFlavor`}},
		{"limits without cohortName", cqDoc(kueueV1beta2, "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 1, borrowingLimit: 1}\n"),
			11, "ClusterQueue", "spec.resourceGroups[0].flavors[0].resources[0].borrowingLimit", []string{"without spec.cohortName"}},
		{"preference PreemptionOverBorrowing without TryNextFlavor", cqDoc(kueueV1beta1, "  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n    whenCanPreempt: MayStopSearch\n    preference: PreemptionOverBorrowing\n"),
			9, "ClusterQueue", "spec.flavorFungibility.preference", []string{"both TryNextFlavor (now TryNextFlavor and MayStopSearch)"}},
		{"preference annotation under gantry.dev without TryNextFlavor", "apiVersion: gantry.dev/v1alpha1\nkind: ClusterQueue\nmetadata:\n  name: q\n  annotations: {gantry.dev/flavor-fungibility-preference: PreemptionOverBorrowing}\nspec: {}\n",
			5, "ClusterQueue", "metadata.annotations[gantry.dev/flavor-fungibility-preference]", []string{"both TryNextFlavor (now MayStopSearch and TryNextFlavor)"}},
		{"preference annotation unknown", "apiVersion: gantry.dev/v1alpha1\nkind: ClusterQueue\nmetadata:\n  name: q\n  annotations: {gantry.dev/flavor-fungibility-preference: Cheapest}\nspec: {}\n",
			5, "ClusterQueue", "metadata.annotations[gantry.dev/flavor-fungibility-preference]", []string{`unknown value "Cheapest"`}},
		{"preference unknown", cqDoc(kueueV1beta1, "  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n    whenCanPreempt: TryNextFlavor\n    preference: Cheapest\n"),
			9, "ClusterQueue", "spec.flavorFungibility.preference", []string{`unknown value "Cheapest"`}},
		{"preference without TryNextFlavor", cqDoc(kueueV1beta2, "  flavorFungibility:\n    whenCanPreempt: TryNextFlavor\n    preference: BorrowingOverPreemption\n"),
			8, "ClusterQueue", "spec.flavorFungibility.preference", []string{"both TryNextFlavor (now MayStopSearch and TryNextFlavor)"}},
		{"preference of the wrong type", cqDoc(kueueV1beta2, "  flavorFungibility:\n    whenCanBorrow: TryNextFlavor\n    whenCanPreempt: TryNextFlavor\n    preference: 3\n"),
			9, "ClusterQueue", "spec.flavorFungibility.preference", []string{"wrong type: expected a string"}},
		{"preference under gantry.dev", cqDoc(gantryV1alpha1, "  flavorFungibility:\n    preference: BorrowingOverPreemption\n"),
			7, "ClusterQueue", "spec.flavorFungibility.preference", []string{"not a field of gantry.dev/v1alpha1", "kueue.x-k8s.io/v1beta1 and kueue.x-k8s.io/v1beta2"}},
		{"admission checks strategy", cqDoc(kueueV1beta2, "  admissionChecksStrategy:\n    admissionChecks:\n    - {name: sample-prov, onFlavors: [default-flavor]}\n"),
			8, "ClusterQueue", "spec.admissionChecksStrategy.admissionChecks[0].name", []string{`AdmissionCheck "sample-prov" not found`}},
		{"admission checks list", cqDoc(kueueV1beta1, "  admissionChecks: [prov-a, prov-b]\n"),
			6, "ClusterQueue", "spec.admissionChecks[1]", []string{`AdmissionCheck "prov-b" not found`}},
		{"concurrent admission", cqDoc(kueueV1beta2, "  concurrentAdmissionPolicy:\n    migration: {mode: TryPreferredFlavors}\n"),
			6, "ClusterQueue", "spec.concurrentAdmissionPolicy", []string{"concurrent admission is not supported yet"}},
		{"concurrent admission under v1beta1", cqDoc(kueueV1beta1, "  concurrentAdmissionPolicy: {}\n"),
			6, "ClusterQueue", "spec.concurrentAdmissionPolicy", []string{"not a field of kueue.x-k8s.io/v1beta1", "the name in kueue.x-k8s.io/v1beta2"}},
		{"v1alpha1 parent under v1beta2", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Cohort\nmetadata: {name: c}\nspec:\n  parent: org\n",
			5, "Cohort", "spec.parent", []string{"not a field of kueue.x-k8s.io/v1beta2 Cohort", "write spec.parentName"}},
		{"parentName under v1alpha1", "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: Cohort\nmetadata: {name: c}\nspec:\n  parentName: org\n",
			5, "Cohort", "spec.parentName", []string{"not a field of kueue.x-k8s.io/v1alpha1 Cohort", "write spec.parent"}},
		{"unknown field still unknown", "apiVersion: kueue.x-k8s.io/v1beta2\nkind: LocalQueue\nmetadata: {name: q}\nspec:\n  clusterQueue: cq\n  flavors: []\n",
			6, "LocalQueue", "spec.flavors", []string{`unknown field "flavors"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			list := loadErrors(t, tc.input)
			var got *Error
			for _, e := range list {
				if e.Field == tc.wantField {
					got = e
				}
			}
			if got == nil {
				t.Fatalf("no problem at %s; got:\n%v", tc.wantField, list)
			}
			if got.Source.File != "in.yaml" || got.Source.Line != tc.wantLine || got.Kind != tc.wantKind {
				t.Errorf("problem at %s %s, want in.yaml:%d %s: %v", got.Source, got.Kind, tc.wantLine, tc.wantKind, got)
			}
			for _, w := range tc.wantMsg {
				if !strings.Contains(got.Msg, w) {
					t.Errorf("message %q lacks %q", got.Msg, w)
				}
			}
		})
	}
}

// TestKueueAcceptedSettings: what each version accepts, and what it becomes.
func TestKueueAcceptedSettings(t *testing.T) {
	flavor := "apiVersion: kueue.x-k8s.io/v1beta2\nkind: ResourceFlavor\nmetadata: {name: f}\n---\n"
	quota := "  resourceGroups:\n  - coveredResources: [cpu]\n    flavors:\n    - name: f\n      resources:\n      - {name: cpu, nominalQuota: 1}\n"
	tryNext := api.FlavorFungibility{WhenCanBorrow: api.TryNextFlavor, WhenCanPreempt: api.TryNextFlavor}
	tests := []struct {
		name string
		spec string
		api  string
		want api.FlavorFungibility
	}{
		{"v1beta2 defaults", "", kueueV1beta2, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}},
		{"v1beta2 preference BorrowingOverPreemption", "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: BorrowingOverPreemption}\n", kueueV1beta2, tryNext},
		{"v1beta1 preference BorrowingOverPreemption", "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: BorrowingOverPreemption}\n", kueueV1beta1, tryNext},
		{"v1beta2 preference PreemptionOverBorrowing", "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}\n", kueueV1beta2, withPref(tryNext, api.PreemptionOverBorrowing)},
		{"v1beta1 preference PreemptionOverBorrowing", "  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: TryNextFlavor, preference: PreemptionOverBorrowing}\n", kueueV1beta1, withPref(tryNext, api.PreemptionOverBorrowing)},
		{"v1beta1 keeps Borrow and Preempt", "  flavorFungibility: {whenCanBorrow: Borrow, whenCanPreempt: Preempt}\n", kueueV1beta1, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.MayStopSearch}},
		{"gantry.dev keeps Borrow", "  flavorFungibility: {whenCanBorrow: Borrow}\n", gantryV1alpha1, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}},
		{"empty check lists", "  admissionChecksStrategy: {admissionChecks: []}\n", kueueV1beta2, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}},
		{"empty v1beta1 check list", "  admissionChecks: []\n", kueueV1beta1, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}},
		{"null preference", "  flavorFungibility: {preference: null}\n", kueueV1beta2, api.FlavorFungibility{WhenCanBorrow: api.MayStopSearch, WhenCanPreempt: api.TryNextFlavor}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := LoadBytes("in.yaml", []byte(flavor+cqDoc(tc.api, tc.spec+quota)))
			if err != nil {
				t.Fatal(err)
			}
			if got := objs.ClusterQueues[0].FlavorFungibility; got != tc.want {
				t.Errorf("fungibility = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestMapKueueFieldsKeepsInput: the mapping edits a copy; the parsed document (which
// the error context was built from) keeps the user's names.
func TestMapKueueFieldsKeepsInput(t *testing.T) {
	ds, perr := parseDocuments("in.yaml", []byte(cqDoc(kueueV1beta2, "  cohortName: org\n  flavorFungibility: {preference: BorrowingOverPreemption}\n")))
	if perr != nil {
		t.Fatal(perr)
	}
	var list ErrorList
	c := errs{list: &list, kind: "ClusterQueue"}
	out, x := mapKueueFields(ds[0].v, kueueV1beta2, "ClusterQueue", reflect.TypeFor[v1alpha1.ClusterQueue](), c)
	if len(list) != 0 {
		t.Fatalf("problems: %v", list)
	}
	if ds[0].v.at("spec").field("cohortName") == nil || ds[0].v.at("spec.flavorFungibility").field("preference") == nil {
		t.Error("the input document was changed")
	}
	if out.at("spec").str("cohort") != "org" || out.at("spec").field("cohortName") != nil {
		t.Errorf("mapped spec keys = %v, want cohort in place of cohortName", out.at("spec").keys)
	}
	if a, ok := x.aside[fieldPreference]; !ok || a.path != "spec.flavorFungibility.preference" || out.at("spec.flavorFungibility").field("preference") != nil {
		t.Errorf("preference not read aside: %+v", x.aside)
	}
}

// TestKueueFieldsTable: every renamed field names a field of its wire type, and each
// version Load reads a kind under is a version the table knows.
func TestKueueFieldsTable(t *testing.T) {
	wire := map[string]reflect.Type{
		"ClusterQueue": reflect.TypeFor[v1alpha1.ClusterQueue](),
		"Cohort":       reflect.TypeFor[v1alpha1.Cohort](),
	}
	known := map[string]bool{kueueV1alpha1: true, kueueV1beta1: true, kueueV1beta2: true, gantryV1alpha1: true}
	for _, f := range kueueFields() {
		if wire[f.kind] == nil {
			t.Errorf("%s: no wire type for kind %s", f.id, f.kind)
			continue
		}
		if f.wire != "" && wireField(wire[f.kind], f.parent, f.wire) == nil {
			t.Errorf("%s: %s.%s is not a field of the gantry.dev/v1alpha1 %s", f.id, f.parent, f.wire, f.kind)
		}
		for v := range f.names {
			if !known[v] {
				t.Errorf("%s: unknown apiVersion %s", f.id, v)
			}
		}
	}
	kinds := strings.Join(SupportedKinds(), "\n")
	for _, k := range []string{"ResourceFlavor", "ClusterQueue", "LocalQueue", "Cohort", "WorkloadPriorityClass", "Topology"} {
		if !strings.Contains(kinds, kueueV1beta2+" "+k) {
			t.Errorf("SupportedKinds lacks %s %s", kueueV1beta2, k)
		}
	}
}

// TestReadKueueObject: a document read on its own reports at its line in the file, and
// comes back as the gantry.dev type with the v1beta2 names mapped.
func TestReadKueueObject(t *testing.T) {
	obj, err := ReadKueueObject("in.yaml", 10, []byte(cqDoc(kueueV1beta2, "  cohortName: org\n")))
	if err != nil {
		t.Fatal(err)
	}
	if cq, ok := obj.(*v1alpha1.ClusterQueue); !ok || cq.Spec.Cohort != "org" || cq.APIVersion != kueueV1beta2 {
		t.Errorf("object = %#v", obj)
	}
	_, err = ReadKueueObject("in.yaml", 10, []byte(cqDoc(kueueV1beta2, "  cohort: org\n")))
	list, ok := err.(ErrorList)
	if !ok || len(list) != 1 || list[0].Source.Line != 15 || list[0].Field != "spec.cohort" || list[0].Name != "cq" {
		t.Fatalf("error = %v, want one at in.yaml:15 spec.cohort", err)
	}
	_, err = ReadKueueObject("in.yaml", 3, []byte("apiVersion: kueue.x-k8s.io/v1alpha1\nkind: ClusterQueue\nmetadata: {name: cq}\n"))
	if err == nil || !strings.Contains(err.Error(), "in.yaml:3: ClusterQueue cq: apiVersion: kind ClusterQueue is not read under") {
		t.Errorf("error = %v, want the apiVersion refused at in.yaml:3", err)
	}
}
