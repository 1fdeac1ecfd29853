package placement_test

import (
	"strings"
	"testing"

	itesting "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// sharedUser is a workload of pods pods, each with own whole GPUs of its own (a
// template claim; none when own is 0) and naming ResourceClaim "pool" (shared GPUs).
func sharedUser(name string, pods int32, own, shared int64) *api.Workload {
	w := itesting.MakeWorkload("ns", name).PodSet("main", pods).CPU(1).GPUs(own + shared).Obj()
	if own > 0 {
		w.PodSets[0].Claims = append(w.PodSets[0].Claims, api.PodClaim{Name: "own", ResourceClaimTemplateName: "one", Spec: gpuSpec(own)})
	}
	w.PodSets[0].Claims = append(w.PodSets[0].Claims, api.PodClaim{Name: "shared", ResourceClaimName: "pool", Spec: gpuSpec(shared)})
	return w
}

// wholeFree is node's free whole GPUs on ov.
func wholeFree(t *testing.T, ov *cluster.Overlay, node string) int64 {
	t.Helper()
	i, ok := ov.NodeIndex(node)
	if !ok {
		t.Fatalf("no node %s", node)
	}
	n, _ := ov.WholeGPUsFree(i)
	return n
}

// Two workloads naming one ResourceClaim: the first allocates it (its devices go to
// the claim's holder), the second runs on the claim's node and takes only its own
// devices, so the node's device accounting holds the claim's GPUs once.
func TestSharedClaimAcrossWorkloadsAllocatedOnce(t *testing.T) {
	ov := claimSnapshot(t).Overlay()
	opts := placement.Options{Claims: gpuClaims(t)}
	a, d := placement.PlaceWorkload(ov, sharedUser("a", 1, 1, 2), nil, opts)
	if d != nil {
		t.Fatalf("a: %v", d)
	}
	node := a.Pods[0].Node
	if got := len(a.Pods[0].Devices.Devices); got != 3 {
		t.Errorf("a's placement names %d devices, want its own one and the claim's two", got)
	}
	i, ok := placement.ClaimNode(ov, "ns/pool")
	if !ok || ov.Node(i).Name != node {
		t.Fatalf("claim ns/pool allocated on %v (%v), want %s", i, ok, node)
	}
	holder, _ := ov.Pod(placement.ClaimHolder("ns/pool"))
	if len(holder.Devices.Devices) != 2 {
		t.Errorf("the claim holds %v, want two GPUs", holder.Devices)
	}
	pod, _ := ov.Pod(cluster.PodRef{Workload: "ns/a", PodSet: "main"})
	if len(pod.Devices.Devices) != 1 {
		t.Errorf("a's pod holds %v, want its own GPU only", pod.Devices)
	}
	b, d := placement.PlaceWorkload(ov, sharedUser("b", 2, 1, 2), nil, opts)
	if d != nil {
		t.Fatalf("b: %v", d)
	}
	for _, p := range b.Pods {
		if p.Node != node || len(p.Devices.Devices) != 1 {
			t.Errorf("b pod %d on %s with %v, want on %s with one GPU of its own", p.Index, p.Node, p.Devices, node)
		}
	}
	if got := wholeFree(t, ov, node); got != 8-1-2-2 {
		t.Errorf("%s has %d free GPUs, want 3 (a's one, the claim's two, b's two)", node, got)
	}
}

// A placement that is undone (a what-if) leaves the claim unallocated.
func TestSharedClaimUndoneWithPlacement(t *testing.T) {
	ov := claimSnapshot(t).Overlay()
	mark := ov.Mark()
	if _, d := placement.PlaceWorkload(ov, sharedUser("a", 1, 1, 2), nil, placement.Options{Claims: gpuClaims(t)}); d != nil {
		t.Fatalf("a: %v", d)
	}
	ov.Undo(mark)
	if i, ok := placement.ClaimNode(ov, "ns/pool"); ok {
		t.Errorf("claim still allocated on node %d after undo", i)
	}
	for _, n := range []string{"a", "b"} {
		if got := wholeFree(t, ov, n); got != 8 {
			t.Errorf("%s: %d free GPUs after undo, want 8", n, got)
		}
	}
}

// A later user that does not fit on the claim's node stays pending: it is never put
// on another node, and the claim is not allocated a second time.
func TestSharedClaimLaterUserOnlyOnClaimNode(t *testing.T) {
	ov := claimSnapshot(t).Overlay()
	opts := placement.Options{Claims: gpuClaims(t)}
	if _, d := placement.PlaceWorkload(ov, sharedUser("a", 1, 4, 2), nil, opts); d != nil {
		t.Fatalf("a: %v", d)
	}
	// 2 GPUs left on the claim's node, 8 on the other.
	if pl, d := placement.PlaceWorkload(ov, sharedUser("b", 1, 3, 2), nil, opts); d == nil {
		t.Fatalf("b placed %+v, want pending: its claim's node has 2 free GPUs", pl.Pods)
	}
	if pl, d := placement.PlaceWorkload(ov, sharedUser("c", 1, 2, 2), nil, opts); d != nil {
		t.Fatalf("c: %v", d)
	} else if len(pl.Pods[0].Devices.Devices) != 2 {
		t.Errorf("c took %v, want its own two GPUs only", pl.Pods[0].Devices)
	}
}

func TestAssumeWithClaims(t *testing.T) {
	claims := gpuClaims(t)
	w := sharedUser("w", 1, 1, 2)
	tests := []struct {
		name    string
		setup   func(*cluster.Overlay) // the state before
		node    string
		devices []string
		wantErr string
		pod     int // devices the pod keeps
		holder  int // devices the claim holds after
	}{
		{name: "allocates the claim", node: "a", devices: []string{"GPU-0", "GPU-1", "GPU-2"}, pod: 1, holder: 2},
		{name: "claim allocated on the node", node: "a", devices: []string{"GPU-3"}, pod: 1, holder: 2,
			setup: func(ov *cluster.Overlay) { assumeHolder(t, ov, "a", "GPU-0", "GPU-1") }},
		{name: "claim allocated elsewhere", node: "b", devices: []string{"GPU-3"}, wantErr: "allocated on node a",
			setup: func(ov *cluster.Overlay) { assumeHolder(t, ov, "a", "GPU-0", "GPU-1") }},
		{name: "slot without the claim's devices", node: "a", devices: []string{"GPU-0"}, wantErr: "the claims take 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ov := claimSnapshot(t).Overlay()
			if tc.setup != nil {
				tc.setup(ov)
			}
			i, _ := ov.NodeIndex(tc.node)
			a, err := devicesOf(ov, i, tc.devices)
			if err != nil {
				t.Fatal(err)
			}
			ref := cluster.PodRef{Workload: w.ID(), PodSet: "main"}
			mark := ov.Mark()
			err = placement.AssumeWithClaims(ov, claims, w, &w.PodSets[0], ref, i, w.PodSets[0].Requests, a)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				if ov.Mark() != mark {
					t.Errorf("the overlay moved on error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			pod, _ := ov.Pod(ref)
			holder, _ := ov.Pod(placement.ClaimHolder("ns/pool"))
			if len(pod.Devices.Devices) != tc.pod || len(holder.Devices.Devices) != tc.holder {
				t.Errorf("pod holds %v, claim %v; want %d and %d devices", pod.Devices, holder.Devices, tc.pod, tc.holder)
			}
		})
	}
}

func TestHolderClaim(t *testing.T) {
	if key, ok := placement.HolderClaim(placement.ClaimHolder("ns/pool")); !ok || key != "ns/pool" {
		t.Errorf("HolderClaim(ClaimHolder(ns/pool)) = %q, %v", key, ok)
	}
	if _, ok := placement.HolderClaim(cluster.PodRef{Workload: "ns/pool", PodSet: "claim"}); ok {
		t.Error("a workload's pod read as a holder")
	}
}

func devicesOf(ov *cluster.Overlay, i int, ids []string) (devices.Assignment, error) {
	return devices.AssignmentFromIDs(ov.Devices(i), ids)
}

// assumeHolder allocates claim ns/pool on node with the devices ids.
func assumeHolder(t *testing.T, ov *cluster.Overlay, node string, ids ...string) {
	t.Helper()
	i, _ := ov.NodeIndex(node)
	a, err := devicesOf(ov, i, ids)
	if err == nil {
		err = ov.Assume(placement.ClaimHolder("ns/pool"), node, resources.Vector{}, a)
	}
	if err != nil {
		t.Fatal(err)
	}
}
