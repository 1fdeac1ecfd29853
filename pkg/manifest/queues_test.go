package manifest

import (
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func amountPtr(a resources.Amount) *resources.Amount { return &a }

func TestClusterQueueConversion(t *testing.T) {
	in := docs(k8s.MakeFlavor("h100").YAML(), k8s.MakeFlavor("spot").YAML(),
		`apiVersion: gantry.dev/v1alpha1
kind: ClusterQueue
metadata:
  name: batch
  annotations:
    gantry.dev/placement-scorers: binpack=2,spread=1
    gantry.dev/disruption-budget-gpus: "8"
spec:
  cohort: global
  queueingStrategy: StrictFIFO
  stopPolicy: Hold
  fairSharing: {weight: 1500m}
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu, memory]
    flavors:
    - name: spot
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 8, lendingLimit: 0}
      - {name: memory, nominalQuota: 1Ti}
    - name: h100
      resources:
      - {name: nvidia.com/gpu, nominalQuota: 4, borrowingLimit: 12}
      - {name: memory, nominalQuota: 512Gi}
`)
	objs, err := LoadBytes("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	q := objs.ClusterQueues[0]
	if q.Cohort != "global" || q.QueueingStrategy != api.StrictFIFO || q.StopPolicy != api.StopHold || q.FairSharing.WeightMilli != 1500 || !q.AdmissionFairSharing.Enabled {
		t.Errorf("queue settings: %+v", q)
	}
	wantPre := api.Preemption{WithinClusterQueue: api.PreemptLowerPriority, ReclaimWithinCohort: api.PreemptAny,
		BorrowWithinCohort: api.BorrowWithinCohort{Policy: api.PreemptLowerPriority}}
	if q.Preemption.WithinClusterQueue != wantPre.WithinClusterQueue || q.Preemption.ReclaimWithinCohort != wantPre.ReclaimWithinCohort ||
		q.Preemption.BorrowWithinCohort.Policy != api.PreemptLowerPriority || *q.Preemption.BorrowWithinCohort.MaxPriorityThreshold != 100 {
		t.Errorf("preemption = %+v", q.Preemption)
	}
	if q.FlavorFungibility != (api.FlavorFungibility{WhenCanBorrow: api.TryNextFlavor, WhenCanPreempt: api.MayStopSearch}) {
		t.Errorf("fungibility = %+v", q.FlavorFungibility)
	}
	spot := q.ResourceGroups[0].Flavors[0].Resources[0]
	h100 := q.ResourceGroups[0].Flavors[1].Resources[0]
	if spot.Nominal != 8 || spot.BorrowingLimit != nil || *spot.LendingLimit != 0 {
		t.Errorf("spot gpu quota = %+v", spot)
	}
	if h100.Nominal != 4 || *h100.BorrowingLimit != 12 || h100.LendingLimit != nil {
		t.Errorf("h100 gpu quota = %+v", h100)
	}
	if mem := q.ResourceGroups[0].Flavors[1].Resources[1]; mem.Nominal != 512<<30 {
		t.Errorf("memory nominal = %d, want 512Gi in bytes", mem.Nominal)
	}
	if len(q.Placement.Scorers) != 2 || q.Placement.Scorers[0] != (api.WeightedScorer{Name: "binpack", Weight: 2}) || q.DisruptionBudget.MaxGPUs != 8 {
		t.Errorf("extensions = %+v %+v", q.Placement, q.DisruptionBudget)
	}
	// The cohort "global" is named but not defined: an implicit cohort is added.
	if len(objs.Cohorts) != 1 || objs.Cohorts[0].Name != "global" {
		t.Errorf("cohorts = %+v, want the implicit cohort global", objs.Cohorts)
	}
}

func TestVolcanoQueueMapping(t *testing.T) {
	in := `apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: research}
spec:
  weight: 3
  reclaimable: true
  deserved: {nvidia.com/gpu: 8, cpu: "64"}
  capability: {nvidia.com/gpu: 16}
  guarantee: {resource: {nvidia.com/gpu: 2}}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata: {name: strict}
spec:
  reclaimable: false
  parent: research
  deserved: {nvidia.com/gpu: 4}
---
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: pg, namespace: team}
spec:
  minMember: 2
  queue: strict
  networkTopology: {mode: hard, highestTierAllowed: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: a, namespace: team, annotations: {scheduling.k8s.io/group-name: pg}}
spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}
---
apiVersion: v1
kind: Pod
metadata: {name: b, namespace: team, annotations: {scheduling.k8s.io/group-name: pg}}
spec: {containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 1}}}]}
`
	objs, err := LoadBytes("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	// "research" has a child queue, so it becomes a Cohort under root; "strict" is a
	// ClusterQueue in cohort research.
	var research *api.Cohort
	for i := range objs.Cohorts {
		if objs.Cohorts[i].Name == "research" {
			research = &objs.Cohorts[i]
		}
	}
	if research == nil || research.Parent != VolcanoRootCohort || research.FairSharing.WeightMilli != 3000 {
		t.Fatalf("cohort research = %+v", research)
	}
	gpu := research.ResourceGroups[0].Flavors[0].Resources[1]
	want := api.ResourceQuota{Name: resources.NvidiaGPU, Nominal: 8, BorrowingLimit: amountPtr(8), LendingLimit: amountPtr(6)}
	if gpu.Name != want.Name || gpu.Nominal != want.Nominal || *gpu.BorrowingLimit != *want.BorrowingLimit || *gpu.LendingLimit != *want.LendingLimit {
		t.Errorf("research gpu quota = %+v, want nominal 8 borrowing 8 lending 6", gpu)
	}
	if len(objs.ClusterQueues) != 1 || objs.ClusterQueues[0].Cohort != "research" {
		t.Fatalf("cluster queues = %+v", objs.ClusterQueues)
	}
	if b := objs.ClusterQueues[0].ResourceGroups[0].Flavors[0].Resources[0].BorrowingLimit; b == nil || *b != 0 {
		t.Errorf("reclaimable=false must not borrow, borrowingLimit = %v", b)
	}
	w := objs.Workloads[0]
	if w.Name != "pg" || w.Queue != "strict" || w.MinMember != 2 || len(w.PodSets) != 2 {
		t.Errorf("workload = %s queue %s min %d sets %d", w.Name, w.Queue, w.MinMember, len(w.PodSets))
	}
	if tr := w.PodSets[0].Topology; tr == nil || tr.Mode != api.TopologyRequired || tr.HighestTierAllowed != 2 {
		t.Errorf("network topology = %+v", tr)
	}
	// The PodGroup's namespace gets a LocalQueue for the Volcano queue.
	found := false
	for _, lq := range objs.LocalQueues {
		found = found || (lq.Key() == "team/strict" && lq.ClusterQueue == "strict")
	}
	if !found {
		t.Errorf("no LocalQueue team/strict synthesized: %+v", objs.LocalQueues)
	}
}

func TestCohortParentSpellings(t *testing.T) {
	in := "apiVersion: kueue.x-k8s.io/v1alpha1\nkind: Cohort\nmetadata: {name: child}\nspec: {parent: root-co}\n---\n" +
		"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Cohort\nmetadata: {name: root-co}\n"
	objs, err := LoadBytes("in.yaml", []byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if objs.Cohorts[0].Parent != "root-co" {
		t.Errorf("parent = %q, want root-co", objs.Cohorts[0].Parent)
	}
}
