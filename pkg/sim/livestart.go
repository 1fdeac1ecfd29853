package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/plan"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// The pods of a cluster dump that run already (api.Objects.Live) start at t=0 where they
// are, before any arrival: a queued workload's pods as that workload, admitted in its
// ClusterQueue (quota charged) and running from t=0 (until its gantry.dev/duration, else
// to the end); a pod without a queue as an occupant, capacity its node does not have
// free, which no cycle can preempt and which leaves only with its node.

// occupantPodSet is the pod set name of occupant pods, as the controller names the pods
// it did not place (pkg/controller foreignPods).
const occupantPodSet = "pod"

// liveWorkloads are the workloads that start bound: they have no arrival of their own.
func liveWorkloads(objs *api.Objects) map[api.WorkloadID]bool {
	out := map[api.WorkloadID]bool{}
	for _, p := range objs.Live.Pods {
		if p.Workload != "" {
			out[p.Workload] = true
		}
	}
	return out
}

// startLive binds the live pods and starts their workloads, in a fixed order: pods with
// recorded device IDs first (so devices picked for the others cannot take theirs), then
// the rest, each group by pod name.
func (s *Simulator) startLive() error {
	pods := append([]api.LivePod(nil), s.objs.Live.Pods...)
	sort.SliceStable(pods, func(i, j int) bool {
		if (len(pods[i].Devices) > 0) != (len(pods[j].Devices) > 0) {
			return len(pods[i].Devices) > 0
		}
		return pods[i].Name < pods[j].Name
	})
	ov := s.snap.Overlay()
	byWorkload := map[api.WorkloadID][]plan.Binding{}
	for _, p := range pods {
		b, err := s.bindLive(ov, p)
		if err != nil {
			return fmt.Errorf("simulate: pod %s (%s): %w", p.Name, p.Source, err)
		}
		if p.Workload != "" {
			byWorkload[p.Workload] = append(byWorkload[p.Workload], b)
		}
	}
	s.snap = ov.Seal()
	ids := make([]api.WorkloadID, 0, len(byWorkload))
	for id := range byWorkload {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if err := s.startBound(id, byWorkload[id]); err != nil {
			return fmt.Errorf("simulate: workload %s: %w", id, err)
		}
	}
	return nil
}

// bindLive binds one pod on its node with its recorded devices, else the node's free
// devices that fit (the device plugin's choice, deterministic for a snapshot).
func (s *Simulator) bindLive(ov *cluster.Overlay, p api.LivePod) (plan.Binding, error) {
	i, ok := ov.NodeIndex(p.Node)
	if !ok {
		return plan.Binding{}, fmt.Errorf("bound to node %q, which is not in the cluster", p.Node)
	}
	a, err := liveDevices(ov, i, p)
	if err != nil {
		return plan.Binding{}, fmt.Errorf("node %s: %w", p.Node, err)
	}
	b := plan.Binding{Workload: p.Workload, PodSet: p.PodSet, Index: int(p.Index), Pod: podName(p.Name), Node: p.Node,
		Devices: a.IDs(), Requests: p.Requests, Assignment: a}
	if p.Workload == "" {
		b.Workload, b.PodSet, b.Index = api.WorkloadID("pod:"+p.Name), occupantPodSet, 0
	}
	if err := ov.AssumeAt(podRef(b), i, b.Requests, a); err != nil {
		return plan.Binding{}, fmt.Errorf("does not fit on node %s as the dump has it: %w", p.Node, err)
	}
	return b, nil
}

func liveDevices(ov *cluster.Overlay, i int, p api.LivePod) (devices.Assignment, error) {
	if len(p.Devices) > 0 {
		return devices.AssignmentFromIDs(ov.Devices(i), p.Devices)
	}
	r, err := devices.ParseRequest(p.Requests)
	if err != nil || r.IsZero() || ov.Devices(i) == nil {
		return devices.Assignment{}, err
	}
	a, why := ov.Devices(i).Fit(r)
	if why != nil {
		return devices.Assignment{}, fmt.Errorf("no free devices for its GPU request: %s", why)
	}
	return a, nil
}

func podName(key string) string {
	_, name, _ := strings.Cut(key, "/")
	return name
}

// startBound admits a workload whose pods are bound (bs) in its ClusterQueue, on the
// flavors of its nodes, and starts it now.
func (s *Simulator) startBound(id api.WorkloadID, bs []plan.Binding) error {
	st := s.wls[id]
	if st == nil {
		return fmt.Errorf("its pods are bound but the workload is not in the input")
	}
	res := s.sched.Resolve(st.w)
	if !res.OK() {
		return fmt.Errorf("its pods are bound but it cannot be charged to a ClusterQueue: %s", res.Message)
	}
	a := s.quota.AssignWithout(st.w, res.ClusterQueue, s.flavorsOff(bs))
	if !a.Fits() {
		return fmt.Errorf("its pods are bound but ClusterQueue %s has no quota left for it on the flavors of nodes %s: %s", res.ClusterQueue, nodeList(bs), a.Why())
	}
	if err := s.quota.Admit(st.w, a); err != nil {
		return err
	}
	if err := s.sched.Submit(st.w, s.clock(), st.remaining()); err != nil {
		return err
	}
	st.submitted, st.queuedAt, st.assignment = true, s.now, a
	s.addLive(id)
	s.emit(s.record(st, EvSubmitted))
	var milli resources.MilliGPU
	for _, b := range bs {
		milli += b.Assignment.MilliGPU()
	}
	if milli > 0 {
		st.gpuMilli = milli
	}
	if err := s.setPhase(st, plan.Admitted); err != nil {
		return err
	}
	s.logLive(st, bs)
	s.touchBindings(bs)
	s.dirty = true // pending workloads see the cluster as the dump has it
	return s.start(st, bs)
}

// flavorsOff are the flavors whose node labels none of the bound nodes carries: the
// workload's quota is charged on the flavors it runs on.
func (s *Simulator) flavorsOff(bs []plan.Binding) map[string]bool {
	off := map[string]bool{}
	for _, f := range s.objs.Flavors {
		on := false
		for _, b := range bs {
			if labelsMatch(f.NodeLabels, s.specs[b.Node].Labels) {
				on = true
				break
			}
		}
		if !on {
			off[f.Name] = true
		}
	}
	return off
}

func labelsMatch(want, have map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

func nodeList(bs []plan.Binding) string {
	set := map[string]bool{}
	for _, b := range bs {
		set[b.Node] = true
	}
	out := make([]string, 0, len(set))
	for n := range set {
		out = append(out, n)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// logLive writes the admitted and placed records of a workload that started bound.
func (s *Simulator) logLive(st *wlState, bs []plan.Binding) {
	r := s.record(st, EvAdmitted)
	r.Flavor, r.Borrowing, r.Reason = usageFlavors(st.assignment), st.assignment.Borrows(), "running in the cluster dump"
	s.emit(r)
	placed := s.record(st, EvPlaced)
	placed.Flavor = r.Flavor
	for _, b := range bs {
		placed.Pods = append(placed.Pods, PodRecord{Name: b.Pod, Node: b.Node, Devices: b.Devices})
	}
	s.emit(placed)
}

func usageFlavors(a admission.Assignment) string {
	set := map[string]bool{}
	for _, u := range a.Usage {
		set[u.Flavor] = true
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// dropOccupants removes the occupant pods on nodes that leave the cluster: their
// capacity leaves with the node (they do not come back with it).
func (s *Simulator) dropOccupants(nodes []string) error {
	var changes []cluster.Change
	for _, n := range nodes {
		i, ok := s.snap.NodeIndex(n)
		if !ok {
			continue
		}
		for _, ref := range s.snap.PodsOn(i) {
			if ref.PodSet != occupantPodSet || !strings.HasPrefix(string(ref.Workload), "pod:") {
				continue
			}
			if bp, ok := s.snap.Pod(ref); ok {
				changes = append(changes, cluster.Change{Op: cluster.OpRemove, Pod: bp})
			}
		}
	}
	if len(changes) == 0 {
		return nil
	}
	next, err := s.snap.Apply(changes)
	if err != nil {
		return fmt.Errorf("simulate: releasing pods of nodes %s: %w", strings.Join(nodes, ","), err)
	}
	s.snap = next
	return nil
}
