package controller

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/apis/v1alpha1"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/placement"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
)

// gpusSpec asks for count whole GPUs of NVIDIA's class.
func gpusSpec(count int64) resourcev1.ResourceClaimSpec {
	return resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{Name: "gpus",
		Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: "gpu.nvidia.com",
			AllocationMode: resourcev1.DeviceAllocationModeExactCount, Count: count}}}}}
}

// sharedWorld is a world of two 8-GPU nodes with NVIDIA's GPU class and the claims:
// "data" (one GPU, named directly by pods) and each pod's own claim "<pod>-gpu" (two
// GPUs, from a template).
func sharedWorld(t *testing.T, data *resourcev1.ResourceClaim, pods ...*corev1.Pod) *world {
	t.Helper()
	nodes := []cluster.Node{h100Node("n1", 8), h100Node("n2", 8)}
	var d draStore
	d.update(nvGPUClass(), false)
	d.update(data, false)
	for _, p := range pods {
		own := testClaim(p.Name+"-gpu", p)
		own.Spec = gpusSpec(2)
		d.update(own, false)
	}
	d.observeNodes(nodes, 1)
	return &world{nodes: nodes, nodeIndex: map[string]int{"n1": 0, "n2": 1}, dra: d.current(), objs: &api.Objects{}}
}

// dataClaim is the shared claim "data", allocated on node to the given DRA devices
// ("gpu-3") when any are given.
func dataClaim(node string, devs ...string) *resourcev1.ResourceClaim {
	c := testClaim("data", nil)
	c.Spec = gpusSpec(1)
	if len(devs) > 0 {
		a := allocation(node, devs...)
		c.Status.Allocation = &a
	}
	return c
}

// sharingPod is a pod naming the shared claim "data" and its own claim from a template
// (created, as "<name>-gpu").
func sharingPod(name string) *corev1.Pod {
	p := testPod(name, corev1.PodResourceClaim{Name: "data", ResourceClaimName: ptr.To("data")},
		corev1.PodResourceClaim{Name: "gpu", ResourceClaimTemplateName: ptr.To("two")})
	p.Status.ResourceClaimStatuses = []corev1.PodResourceClaimStatus{{Name: "gpu", ResourceClaimName: ptr.To(name + "-gpu")}}
	return p
}

// writesOf lists a binding's claim writes as "claim=pool/device,..." sorted.
func writesOf(b binding) []string {
	var out []string
	for _, w := range b.claims {
		var devs []string
		for _, r := range w.allocation.Devices.Results {
			devs = append(devs, r.Pool+"/"+r.Device)
		}
		sort.Strings(devs)
		out = append(out, w.claim.Name+"="+strings.Join(devs, ","))
	}
	sort.Strings(out)
	return out
}

// planClaims allocates a shared claim once across a gang's bindings, whatever their
// order: the pod whose slot has the claim's devices allocates it, every other pod
// naming it only reserves it; a claim allocated already is only reserved, its devices
// left out of the slot of the pod that allocated it; one allocated on another node, or
// not allocated by any pod of the gang, holds the gang.
func TestPlanClaimsSharedClaimOnce(t *testing.T) {
	a, b := sharingPod("a"), sharingPod("b")
	slot := func(idx int32, node string, ids ...string) v1alpha1.PodPlacement {
		return v1alpha1.PodPlacement{PodSet: "main", Index: idx, Node: node, Devices: ids}
	}
	for _, tc := range []struct {
		name    string
		data    *resourcev1.ResourceClaim
		slots   [2]v1alpha1.PodPlacement // a's and b's
		order   []int                    // bindings order by pod (0: a, 1: b)
		want    [2]string                // a's and b's writes, "; "-joined
		wantErr error                    // errSharedUnallocated or errClaimTaken
	}{
		{name: "allocating pod first", data: dataClaim(""),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1", "GPU-2"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{0, 1},
			want: [2]string{"a-gpu=n1/gpu-0,n1/gpu-1; data=n1/gpu-2", "b-gpu=n1/gpu-3,n1/gpu-4; data=n1/gpu-2"}},
		{name: "reserving pod first", data: dataClaim(""),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1", "GPU-2"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{1, 0},
			want: [2]string{"a-gpu=n1/gpu-0,n1/gpu-1; data=n1/gpu-2", "b-gpu=n1/gpu-3,n1/gpu-4; data=n1/gpu-2"}},
		{name: "allocated by another gang", data: dataClaim("n1", "gpu-7"),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{0, 1},
			want: [2]string{"a-gpu=n1/gpu-0,n1/gpu-1; data=n1/gpu-7", "b-gpu=n1/gpu-3,n1/gpu-4; data=n1/gpu-7"}},
		{name: "allocated by this gang before a retry", data: dataClaim("n1", "gpu-2"),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1", "GPU-2"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{0, 1},
			want: [2]string{"a-gpu=n1/gpu-0,n1/gpu-1; data=n1/gpu-2", "b-gpu=n1/gpu-3,n1/gpu-4; data=n1/gpu-2"}},
		{name: "allocated on another node", data: dataClaim("n2", "gpu-0"),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{0, 1},
			wantErr: errClaimTaken},
		{name: "allocated by a gang not bound yet", data: dataClaim(""),
			slots: [2]v1alpha1.PodPlacement{slot(0, "n1", "GPU-0", "GPU-1"), slot(1, "n1", "GPU-3", "GPU-4")}, order: []int{0, 1},
			wantErr: errSharedUnallocated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sharedWorld(t, tc.data, a, b)
			pods := []*corev1.Pod{a, b}
			var bs []binding
			for _, k := range tc.order {
				bs = append(bs, binding{pod: pods[k], slot: tc.slots[k]})
			}
			ok, err := planClaims(w, bs)
			if tc.wantErr != nil {
				if ok || !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), "ns/data") {
					t.Fatalf("planned %v, error %v; want %v naming ns/data", ok, err, tc.wantErr)
				}
				if st := claimHoldStatus(v1alpha1.WorkloadStatus{}, err); (st.Reason == ReasonWaitingForClaims) != errors.Is(err, errSharedUnallocated) {
					t.Errorf("hold reason %s for %v", st.Reason, err)
				}
				return
			}
			if !ok || err != nil {
				t.Fatalf("not planned: %v", err)
			}
			for i, k := range tc.order {
				if got := strings.Join(writesOf(bs[i]), "; "); got != tc.want[k] {
					t.Errorf("pod %s: writes %s, want %s", pods[k].Name, got, tc.want[k])
				}
			}
		})
	}
}

// admittedSharing is an admitted workload "ns/<name>" of two pods naming the shared
// claim "data" (one GPU) and a claim of their own (two GPUs), placed as placements say.
func admittedSharing(name string, placements ...v1alpha1.PodPlacement) (v1alpha1.Workload, *api.Workload) {
	spec := func(n int64) *resourcev1.ResourceClaimSpec { s := gpusSpec(n); return &s }
	model := &api.Workload{Meta: api.Meta{Namespace: "ns", Name: name}, PodSets: []api.PodSet{{Name: "main", Count: 2, Claims: []api.PodClaim{
		{Name: "data", ResourceClaimName: "data", Spec: spec(1)},
		{Name: "gpu", ResourceClaimTemplateName: "two", Spec: spec(2)},
	}}}}
	obj := v1alpha1.Workload{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Status: v1alpha1.WorkloadStatus{Admission: &v1alpha1.Admission{ClusterQueue: "cq", Placements: placements}}}
	return obj, model
}

// heldBy lists the snapshot's pods on node with their devices: "ref=GPU-0,GPU-1".
func heldBy(snap *cluster.Snapshot, node string) []string {
	i, _ := snap.NodeIndex(node)
	var out []string
	for _, ref := range snap.PodsOn(i) {
		bp, _ := snap.Pod(ref)
		ids := bp.Devices.IDs()
		sort.Strings(ids)
		out = append(out, ref.String()+"="+strings.Join(ids, ","))
	}
	sort.Strings(out)
	return out
}

// The cycle state holds an allocated shared claim by its holder, with its devices
// taken out of the pod that allocated it, whether an admitted pod reserves it or not;
// a shared claim not written yet is held as the simulator holds it once the gang is
// bound (the pod whose placement has its devices hands them to the holder).
func TestBuildStateHoldsSharedClaims(t *testing.T) {
	holder := placement.ClaimHolder("ns/data").String()
	p0 := v1alpha1.PodPlacement{PodSet: "main", Index: 0, Node: "n1", Devices: []string{"GPU-0", "GPU-1", "GPU-2"}}
	p1 := v1alpha1.PodPlacement{PodSet: "main", Index: 1, Node: "n1", Devices: []string{"GPU-3", "GPU-4"}}
	for _, tc := range []struct {
		name     string
		data     *resourcev1.ResourceClaim
		admitted bool
		order    []v1alpha1.PodPlacement
		want     []string
	}{
		{name: "allocated, reserved by the gang", data: reservedFor(dataClaim("n1", "gpu-0"), "w-0"), admitted: true, order: []v1alpha1.PodPlacement{p0, p1},
			want: []string{holder + "=GPU-0", "ns/w/main-0=GPU-1,GPU-2", "ns/w/main-1=GPU-3,GPU-4"}},
		{name: "allocated, reserved by nobody admitted", data: dataClaim("n1", "gpu-6"), admitted: false,
			want: []string{holder + "=GPU-6"}},
		{name: "not written yet, reserving pod placed first", data: dataClaim(""), admitted: true, order: []v1alpha1.PodPlacement{p1, p0},
			want: []string{holder + "=GPU-2", "ns/w/main-0=GPU-0,GPU-1", "ns/w/main-1=GPU-3,GPU-4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := sharedWorld(t, tc.data)
			obj, model := admittedSharing("w", tc.order...)
			if tc.admitted {
				w.workloads = []v1alpha1.Workload{obj}
			}
			cs, err := buildState(w, func(*v1alpha1.Workload, int32) (*api.Workload, error) { return model, nil }, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := heldBy(cs.cluster, "n1"); !slices.Equal(got, tc.want) {
				t.Errorf("n1 holds %v, want %v", got, tc.want)
			}
			for _, msg := range cs.warnings {
				if !strings.Contains(msg, `clusterQueue "cq" not found`) { // no queues in this world
					t.Errorf("warning: %s", msg)
				}
			}
			if allocated := tc.data.Status.Allocation != nil; cs.occupants["claim:ns/data"] != allocated {
				t.Errorf("occupants %v: an allocated claim's holder is one, a claim not written yet is not", cs.occupants)
			}
		})
	}
}

func reservedFor(c *resourcev1.ResourceClaim, uids ...types.UID) *resourcev1.ResourceClaim {
	for _, u := range uids {
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: string(u), UID: u})
	}
	return c
}
