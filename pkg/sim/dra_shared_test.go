package sim

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
	resourcev1 "k8s.io/api/resource/v1"
	"pgregory.net/rapid"
)

// GPUClass adds NVIDIA's gpu DeviceClass (whole GPUs).
func (b *world) GPUClass() *world {
	dc := resourcev1.DeviceClass{}
	dc.Name = dra.ClassGPU
	dc.Spec.Selectors = []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
		Expression: `device.driver == "gpu.nvidia.com" && device.attributes["gpu.nvidia.com"].type == "gpu"`}}}
	b.o.DeviceClasses = append(b.o.DeviceClasses, api.DeviceClass{Object: dc})
	return b
}

// ClaimJob adds a gang of pods, each with own whole GPUs of its own (a claim template)
// and naming ResourceClaim claim of shared whole GPUs, as the loader resolves them:
// every pod's requests count both (quota charges a shared claim to each pod).
func (b *world) ClaimJob(name string, pods int32, own int64, claim string, shared int64, submit, dur time.Duration) *world {
	b.Job(name, pods, own+shared, submit, dur, 0)
	ps := &b.o.Workloads[len(b.o.Workloads)-1].PodSets[0]
	if own > 0 {
		ps.Claims = append(ps.Claims, api.PodClaim{Name: "own", ResourceClaimTemplateName: "own", Spec: claimGPUs(own)})
	}
	ps.Claims = append(ps.Claims, api.PodClaim{Name: "shared", ResourceClaimName: claim, Spec: claimGPUs(shared)})
	return b
}

func claimGPUs(n int64) *resourcev1.ResourceClaimSpec {
	return &resourcev1.ResourceClaimSpec{Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
		Name: "gpus", Exactly: &resourcev1.ExactDeviceRequest{DeviceClassName: dra.ClassGPU, Count: n}}}}}
}

// simAt runs objs up to t and returns the simulator there.
func simAt(t *testing.T, objs *api.Objects, at time.Duration) *Simulator {
	t.Helper()
	cfg := engine.Config{Preemption: true, Reservations: true, Grace: 2 * time.Minute}
	s, err := New(objs, Options{KeepLog: true, Until: at, Policy: engine.Policy{Config: cfg, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	return s
}

// claimState is what the snapshot says of shared claim key: the node it is allocated
// on ("" when not) and how many devices it holds, and the free whole GPUs per node.
func claimState(s *Simulator, key string) (node string, held int, free map[string]int64) {
	if bp, ok := s.snap.Pod(placement.ClaimHolder(key)); ok {
		node, held = bp.Node, len(bp.Devices.Devices)
	}
	free = map[string]int64{}
	ov := s.snap.Overlay()
	for i := 0; i < ov.NumNodes(); i++ {
		free[ov.Node(i).Name], _ = ov.WholeGPUsFree(i)
	}
	return node, held, free
}

// sharedWorld: two 8-GPU nodes; a (1 pod) and b (2 pods) name claim "pool" (4 GPUs)
// and use one GPU of their own per pod; c names it after both ended.
func sharedWorld() *api.Objects {
	return MakeWorld().Pool("od", 2, 8, "on-demand").Queue("cq", 100, "od").GPUClass().
		ClaimJob("a", 1, 1, "pool", 4, 0, 10*time.Minute).
		ClaimJob("b", 2, 1, "pool", 4, time.Minute, 15*time.Minute).
		ClaimJob("c", 1, 2, "pool", 4, 20*time.Minute, 5*time.Minute).Obj()
}

// Two workloads naming one ResourceClaim run on its node and its devices are taken
// once; they stay while either runs, return when both have ended, and a third workload
// naming the claim after that allocates it again.
func TestSharedClaimAcrossWorkloads(t *testing.T) {
	tests := []struct {
		at       time.Duration
		running  []string
		held     int   // the claim's devices (0: not allocated)
		freeThen int64 // free GPUs on the claim's node (all 16 free when not allocated)
	}{
		{at: 2 * time.Minute, running: []string{"a", "b"}, held: 4, freeThen: 8 - 4 - 1 - 2},
		{at: 12 * time.Minute, running: []string{"b"}, held: 4, freeThen: 8 - 4 - 2},
		{at: 17 * time.Minute, held: 0},
		{at: 22 * time.Minute, running: []string{"c"}, held: 4, freeThen: 8 - 4 - 2},
		{at: 26 * time.Minute, held: 0},
	}
	for _, tc := range tests {
		t.Run(tc.at.String(), func(t *testing.T) {
			s := simAt(t, sharedWorld(), tc.at)
			node, held, free := claimState(s, "ns/pool")
			if held != tc.held {
				t.Fatalf("the claim holds %d devices on %q, want %d", held, node, tc.held)
			}
			if tc.held == 0 {
				if free["od-0"]+free["od-1"] != 16 {
					t.Errorf("free GPUs %v, want all 16", free)
				}
				return
			}
			if free[node] != tc.freeThen {
				t.Errorf("%s has %d free GPUs, want %d", node, free[node], tc.freeThen)
			}
			for _, name := range tc.running {
				st := s.wls[api.WorkloadID("ns/"+name)]
				if st.phase != plan.Running {
					t.Fatalf("%s is %s, want running", name, st.phase)
				}
				for _, b := range st.bindings {
					bp, _ := s.snap.Pod(podRef(b))
					if b.Node != node || len(bp.Devices.Devices) != int(st.w.PodSets[0].Requests[resources.NvidiaGPU])-4 {
						t.Errorf("%s on %s holding %v, want on %s with its own GPUs only", b.Pod, b.Node, bp.Devices, node)
					}
				}
			}
		})
	}
}

// Evicting one user of a shared claim leaves the claim allocated for the other; the
// devices come back when the last user leaves.
func TestSharedClaimSurvivesEvictionOfOneUser(t *testing.T) {
	s := simAt(t, sharedWorld(), 2*time.Minute)
	for _, step := range []struct {
		evict string
		held  int
	}{{"a", 4}, {"b", 0}} {
		if err := s.evict(s.wls[api.WorkloadID("ns/"+step.evict)], plan.LayerCluster, "test"); err != nil {
			t.Fatal(err)
		}
		if _, held, _ := claimState(s, "ns/pool"); held != step.held {
			t.Errorf("after evicting %s the claim holds %d devices, want %d", step.evict, held, step.held)
		}
	}
}

// Property: over random workloads naming two shared claims (or none, asking through
// nvidia.com/gpu), with priorities (preemption), node failures and recoveries, at every
// settled instant no device is held twice, a shared claim is held once with its count,
// only while a running pod names it, and every pod naming it is on its node with only
// its own devices; and every workload finishes.
func TestSharedClaimsProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		objs, sizes := drawSharedWorld(rt)
		cfg := engine.Config{Preemption: true, Reservations: true, Grace: time.Minute}
		var s *Simulator
		var violation error
		check := ObserverFuncs{Sample: func(ClusterState) {
			if violation == nil {
				violation = checkSharedClaims(s, sizes)
			}
		}}
		s, err := New(objs, Options{KeepLog: true, Observers: []Observer{check}, Policy: engine.Policy{Config: cfg, Seed: 7}})
		if err != nil {
			rt.Fatal(err)
		}
		if err := s.Run(); err != nil {
			rt.Fatal(err)
		}
		if violation != nil {
			rt.Fatalf("at %s: %v", s.now, violation)
		}
		for _, id := range s.order {
			if st := s.wls[id]; st.phase != plan.Finished {
				rt.Fatalf("%s ends %s, want finished", id, st.phase)
			}
		}
	})
}

// drawSharedWorld draws three 8-GPU nodes, claims p0 and p1 of 1-3 GPUs, 3-8 jobs and
// up to two node failures; sizes are the claims' device counts by key.
func drawSharedWorld(rt *rapid.T) (*api.Objects, map[string]int) {
	b := MakeWorld().Pool("od", 3, 8, "on-demand").Queue("cq", 1000, "od").GPUClass()
	sizes := map[string]int{}
	for k := range 2 {
		sizes[fmt.Sprintf("ns/p%d", k)] = rapid.IntRange(1, 3).Draw(rt, fmt.Sprintf("size%d", k))
	}
	jobs := rapid.IntRange(3, 8).Draw(rt, "jobs")
	for j := range jobs {
		name := fmt.Sprintf("j%d", j)
		pods := int32(rapid.IntRange(1, 3).Draw(rt, "pods"))
		submit := time.Duration(rapid.IntRange(0, 30).Draw(rt, "submitMin")) * time.Minute
		dur := time.Duration(rapid.IntRange(1, 20).Draw(rt, "durMin")) * time.Minute
		claim := rapid.IntRange(-1, 1).Draw(rt, "claim")
		if claim < 0 {
			b.Job(name, pods, int64(rapid.IntRange(1, 4).Draw(rt, "gpus")), submit, dur, 0)
		} else {
			key := fmt.Sprintf("p%d", claim)
			b.ClaimJob(name, pods, int64(rapid.IntRange(0, 1).Draw(rt, "own")), key, int64(sizes["ns/"+key]), submit, dur)
		}
		b.Priority(name, int32(rapid.IntRange(0, 2).Draw(rt, "priority")))
	}
	for k := range rapid.IntRange(0, 2).Draw(rt, "failures") {
		node := fmt.Sprintf("od-%d", rapid.IntRange(0, 2).Draw(rt, fmt.Sprintf("failNode%d", k)))
		at := time.Duration(rapid.IntRange(1, 40).Draw(rt, "failMin")) * time.Minute
		b.Event(api.ClusterEvent{Type: api.EventNodeFail, At: at, Nodes: []string{node}})
		b.Event(api.ClusterEvent{Type: api.EventNodeRecover, At: at + 5*time.Minute, Nodes: []string{node}})
	}
	return b.Obj(), sizes
}

// checkSharedClaims checks the model's shared claims (see TestSharedClaimsProperty).
func checkSharedClaims(s *Simulator, sizes map[string]int) error {
	users := map[string]int{} // claim -> bound pods naming it
	for i := 0; i < s.snap.NumNodes(); i++ {
		node := s.snap.Node(i).Name
		seen := map[string]cluster.PodRef{}
		for _, ref := range s.snap.PodsOn(i) {
			bp, _ := s.snap.Pod(ref)
			for _, id := range bp.Devices.IDs() {
				if other, dup := seen[id]; dup {
					return fmt.Errorf("node %s: device %s held by %s and %s", node, id, other, ref)
				}
				seen[id] = ref
			}
			if key, ok := placement.HolderClaim(ref); ok {
				if len(bp.Devices.Devices) != sizes[key] {
					return fmt.Errorf("claim %s holds %v, want %d devices", key, bp.Devices, sizes[key])
				}
				continue
			}
			if err := checkClaimUser(s, ref, bp, users); err != nil {
				return err
			}
		}
		if free, _ := s.snap.Overlay().WholeGPUsFree(i); int(free) != 8-len(seen) {
			return fmt.Errorf("node %s: %d free GPUs, but its pods hold %d of 8", node, free, len(seen))
		}
	}
	for key := range sizes {
		if _, held := s.snap.Pod(placement.ClaimHolder(key)); held != (users[key] > 0) {
			return fmt.Errorf("claim %s allocated %v with %d pods naming it", key, held, users[key])
		}
	}
	return nil
}

// checkClaimUser checks a workload's pod: one naming a shared claim is on the claim's
// node and holds only its own devices.
func checkClaimUser(s *Simulator, ref cluster.PodRef, bp cluster.BoundPod, users map[string]int) error {
	st := s.wls[ref.Workload]
	if st == nil || (st.phase != plan.Running && st.phase != plan.Preempting) {
		return fmt.Errorf("pod %s is bound but its workload is not running", ref)
	}
	ps := podSetNamed(st.w, ref.PodSet)
	shared := placement.SharedClaims(ps, st.w.Namespace)
	if len(shared) == 0 {
		return nil
	}
	key := shared[0]
	users[key]++
	holder, ok := s.snap.Pod(placement.ClaimHolder(key))
	if !ok || holder.Node != bp.Node {
		return fmt.Errorf("pod %s on %s names claim %s, allocated on %q", ref, bp.Node, key, holder.Node)
	}
	own := int(ps.Requests[resources.NvidiaGPU]) - len(holder.Devices.Devices)
	if len(bp.Devices.Devices) != own || slices.ContainsFunc(bp.Devices.IDs(), func(id string) bool { return slices.Contains(holder.Devices.IDs(), id) }) {
		return fmt.Errorf("pod %s holds %v, want its own %d GPUs (the claim holds %v)", ref, bp.Devices, own, holder.Devices)
	}
	return nil
}
