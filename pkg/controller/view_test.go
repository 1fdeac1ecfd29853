package controller

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	k8s "github.com/gantry-sched/gantry/internal/testing/k8s"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/view"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

var viewNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// viewCluster: ClusterQueue "train" (cohort "org") with 8 H100s over two 8-GPU nodes.
// Job "a" runs on four GPUs of n1; Workload "b" waits for quota, as the controller
// wrote it on its status.
func viewCluster() []client.Object {
	running := k8s.MakeWorkload("ns", "job-a").Obj()
	running.Spec.PodSets[0].Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
	running.Spec.Owner = &v1alpha1.WorkloadOwner{APIVersion: "batch/v1", Kind: "Job", Name: "a"}
	running.Status = v1alpha1.WorkloadStatus{State: v1alpha1.StateAdmitted, Reason: ReasonAdmitted,
		Conditions: []metav1.Condition{{Type: v1alpha1.WorkloadAdmitted, Status: metav1.ConditionTrue, Reason: ReasonAdmitted,
			LastTransitionTime: metav1.NewTime(viewNow.Add(-20 * time.Minute))}},
		Admission: &v1alpha1.Admission{ClusterQueue: "train",
			PodSetAssignments: []v1alpha1.PodSetAssignment{{Name: "main", Count: ptr.To[int32](1),
				Flavors:       map[corev1.ResourceName]string{"nvidia.com/gpu": "h100"},
				ResourceUsage: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}}},
			Placements: []v1alpha1.PodPlacement{{PodSet: "main", Index: 0, Node: "n1",
				Devices: []string{"GPU-0", "GPU-1", "GPU-2", "GPU-3"}}}}}
	pod := k8s.MakePod("ns", "a-xyz").GPUs("4").On("n1").Phase(corev1.PodRunning).
		Annotate(AnnotationWorkload, "ns/job-a").Annotate(AnnotationPodSlot, "main-0").
		Annotate(AnnotationDevices, "GPU-0,GPU-1,GPU-2,GPU-3").Obj()

	waiting := k8s.MakeWorkload("ns", "b").Obj()
	waiting.Spec.PodSets[0].Requests = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	waiting.CreationTimestamp = metav1.NewTime(viewNow.Add(-5 * time.Minute))
	waiting.Status = v1alpha1.WorkloadStatus{State: v1alpha1.StatePending, Reason: "WaitingForQuota", Layer: "admission",
		Details: []string{"needs 8 nvidia.com/gpu in flavor h100, 4 free of nominal 8"}, Remedy: "raise the quota",
		Position: ptr.To[int32](0), ETA: ptr.To(metav1.NewTime(viewNow.Add(40 * time.Minute)))}

	return []client.Object{
		k8s.MakeFlavor("h100").Obj(),
		k8s.MakeClusterQueue("train").Cohort("org").Quota("h100", "nvidia.com/gpu", "8").Obj(),
		k8s.MakeLocalQueue("ns", "lq", "train").Obj(),
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "ns"}},
		k8s.MakeNode("n1").H100(8).Obj(), k8s.MakeNode("n2").H100(8).Obj(),
		&running, &waiting, pod,
	}
}

func readTestView(t *testing.T, objs ...client.Object) view.Snapshot {
	t.Helper()
	scheme, err := NewScheme()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build()
	v, err := ReadViewAt(context.Background(), c, viewNow)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestReadViewQueuesAndCohorts(t *testing.T) {
	v := readTestView(t, viewCluster()...)
	if len(v.Queues) != 1 {
		t.Fatalf("queues %+v, want train", v.Queues)
	}
	q := v.Queues[0]
	if q.Name != "train" || q.Cohort != "org" || q.NominalGPU != 8000 || q.UsedGPU != 4000 || q.Pending != 1 || q.Admitted != 1 {
		t.Errorf("train: %+v; want cohort org, 8 nominal, 4 used, 1 pending, 1 admitted", q)
	}
	if len(v.Cohorts) != 1 || v.Cohorts[0].Name != "org" || !slices.Equal(v.Cohorts[0].Queues, []string{"train"}) {
		t.Errorf("cohorts %+v, want org holding train", v.Cohorts)
	}
	if !v.At.Equal(viewNow) {
		t.Errorf("at %s, want %s", v.At, viewNow)
	}
}

func TestReadViewWorkloads(t *testing.T) {
	v := readTestView(t, viewCluster()...)
	byID := map[string]view.Workload{}
	for _, w := range v.Workloads {
		byID[w.ID] = w
	}
	a, b := byID["ns/job-a"], byID["ns/b"]
	if a.Phase != view.Running || a.Owner != "Job/a" || a.GPU != 4000 || a.Progress != 20*time.Minute ||
		!slices.Equal(a.Nodes, []string{"n1"}) || len(a.Placements) != 1 || a.Placements[0].Name != "a-xyz" || a.Reason != "" {
		t.Errorf("ns/job-a: %+v; want running on n1 for 20m as pod a-xyz, 4 GPUs, owner Job/a, no reason", a)
	}
	if b.Phase != view.Pending || b.Layer != "admission" || b.Reason != "WaitingForQuota" || b.Remedy != "raise the quota" ||
		b.Position != 1 || b.ETA == nil || *b.ETA != 40*time.Minute || b.Waited != 5*time.Minute || len(b.Details) != 1 {
		t.Errorf("ns/b: %+v; want pending in admission for WaitingForQuota at position 1, ETA in 40m, waiting 5m", b)
	}
	if v.Workloads[0].ID != "ns/b" {
		t.Errorf("first workload %s, want the pending ns/b (pending ones first in their queue)", v.Workloads[0].ID)
	}
}

func TestReadViewNodesShowHolders(t *testing.T) {
	v := readTestView(t, viewCluster()...)
	if len(v.Nodes) != 2 || v.Nodes[0].Name != "n1" {
		t.Fatalf("nodes %+v, want n1 and n2", v.Nodes)
	}
	for _, n := range v.Nodes {
		if !n.Ready || len(n.GPUs) != 8 {
			t.Errorf("node %s: ready %v, %d GPUs; want ready, 8", n.Name, n.Ready, len(n.GPUs))
		}
		for _, g := range n.GPUs {
			wantHolder := ""
			if n.Name == "n1" && g.Index < 4 {
				wantHolder = "ns/job-a"
			}
			if len(g.Devices) != 1 || g.Devices[0].Holder != wantHolder {
				t.Errorf("node %s GPU %d: devices %+v, want one held by %q", n.Name, g.Index, g.Devices, wantHolder)
			}
		}
	}
}

func TestLivePhase(t *testing.T) {
	running := k8s.MakePod("ns", "p").Phase(corev1.PodRunning).Obj()
	starting := k8s.MakePod("ns", "q").Phase(corev1.PodPending).Obj()
	cases := []struct {
		state v1alpha1.WorkloadState
		layer string
		pods  []*corev1.Pod
		want  view.Phase
	}{
		{"", "", nil, view.Pending},
		{v1alpha1.StatePending, "admission", nil, view.Pending},
		{v1alpha1.StateQuotaReserved, "", nil, view.Pending},
		{v1alpha1.StateAdmitted, "", []*corev1.Pod{starting}, view.Admitted},
		{v1alpha1.StateAdmitted, "", []*corev1.Pod{starting, running}, view.Running},
		{v1alpha1.StateEvicted, "", nil, view.Evicted},
		{v1alpha1.StateEvicted, "placement", nil, view.Pending},
		{v1alpha1.StateFinished, "", nil, view.Finished},
	}
	for _, c := range cases {
		wl := &v1alpha1.Workload{Status: v1alpha1.WorkloadStatus{State: c.state, Layer: c.layer}}
		if got := livePhase(wl, c.pods); got != c.want {
			t.Errorf("state %q layer %q with %d pods: %s, want %s", c.state, c.layer, len(c.pods), got, c.want)
		}
	}
}

// failingReader refuses every List: ReadView must say which list failed.
type failingReader struct{ client.Reader }

func (failingReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return errors.New("forbidden")
}

func TestReadViewNamesTheFailingList(t *testing.T) {
	_, err := ReadViewAt(context.Background(), failingReader{}, viewNow)
	if err == nil || !strings.Contains(err.Error(), "ResourceFlavorList") || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("error %v, want the failing list named with the cause", err)
	}
}
