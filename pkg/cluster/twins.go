package cluster

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
	corev1 "k8s.io/api/core/v1"
)

// Twins are nodes configured alike (the same allocatable resources, taints, conditions
// and GPUs: models, sharing, MIG layout, NVLink and PCIe topology, health) on which
// nothing is bound or held: their states are equal, so whatever is computed from a
// node's resources, devices and taints (a device fit, a score) is the same for all of
// them. An idle pool is one class of twins, so placement can evaluate it once instead
// of once per node. Names and labels may differ between twins.

// TwinClass returns node i's class of twins: nodes with equal classes are twins. ok is
// false for a node that is not known to have a twin, and for every node the overlay has
// written (it may have pods, or have had them and no longer be like its twins).
func (o *Overlay) TwinClass(i int) (class int32, ok bool) {
	c := o.base.twins[i]
	if c < 0 || o.Touched(i) {
		return -1, false
	}
	return c, true
}

// buildTwins gives each node of a new snapshot its class, or -1 when it has no twin or
// something is held on its devices. gpus[i] is node i's NodeDevices.GPUs(); empty[i]
// tells that nothing is held on its devices.
func buildTwins(nodes []*nodeState, gpus [][]devices.GPU, empty []bool) []int32 {
	out := make([]int32, len(nodes))
	byKey := map[string]int32{}
	members := []int{}
	var firsts recent[int] // a node of each recent class
	for i, st := range nodes {
		out[i] = -1
		if !empty[i] {
			continue
		}
		// Compare with the nodes that started the latest classes before building a key.
		if first, ok := firsts.find(func(j int) bool { return sameConfig(nodes[j].node, gpus[j], st.node, gpus[i]) }); ok {
			out[i] = out[first]
			members[out[i]]++
			continue
		}
		key := twinKey(st.node, gpus[i])
		c, seen := byKey[key]
		if !seen {
			c = int32(len(members))
			byKey[key] = c
			members = append(members, 0)
		}
		out[i] = c
		members[c]++
		firsts.put(i)
	}
	// A class of one node is no twin: drop it, and number the others densely.
	renum := make([]int32, len(members))
	next := int32(0)
	for c, n := range members {
		renum[c] = -1
		if n > 1 {
			renum[c] = next
			next++
		}
	}
	for i, c := range out {
		if c >= 0 {
			out[i] = renum[c]
		}
	}
	return out
}

// nothingHeld reports whether the node's devices hold nothing: what they have free is
// what they offer. On whole and MIG GPUs everything held has a share of the GPU, so
// comparing the free share with the offered one is enough and cheap (no free vector, whose
// MIG resource names cost an allocation each); replicas and fractions can be held with no
// share at all (a memory-only share), so there the free vector is compared.
func nothingHeld(st *nodeState, gpus []devices.GPU) bool {
	if st.devices == nil {
		return true
	}
	for _, g := range gpus {
		if m := g.Sharing.EffectiveMode(); m != devices.Exclusive && m != devices.MIG {
			return maps.Equal(st.devices.Free(), st.devCap)
		}
	}
	var free int64
	for _, f := range st.gpuFree() {
		free += int64(f)
	}
	return free == int64(st.devCap[resources.GPUMilli])
}

// sameConfig compares what twins share (GPU UUIDs, names and labels aside).
func sameConfig(a *Node, ag []devices.GPU, b *Node, bg []devices.GPU) bool {
	if a.Unschedulable != b.Unschedulable || a.Ready != b.Ready || !maps.Equal(a.Allocatable, b.Allocatable) ||
		len(a.Taints) != len(b.Taints) || len(ag) != len(bg) || (a.Devices == nil) != (b.Devices == nil) {
		return false
	}
	for k := range a.Taints {
		x, y := &a.Taints[k], &b.Taints[k]
		if x.Key != y.Key || x.Value != y.Value || x.Effect != y.Effect {
			return false
		}
	}
	for k := range ag {
		x, y := &ag[k], &bg[k]
		if x.Index != y.Index || x.Model != y.Model || x.NVLinkDomain != y.NVLinkDomain || x.PCIeSwitch != y.PCIeSwitch ||
			x.Healthy != y.Healthy || !slices.Equal(x.Instances, y.Instances) || !sameSharing(x.Sharing, y.Sharing) {
			return false
		}
	}
	return true
}

func sameSharing(a, b devices.Sharing) bool {
	return a.Mode == b.Mode && a.MIGStrategy == b.MIGStrategy && a.Layout == b.Layout && a.Replicas == b.Replicas &&
		a.RenameByDefault == b.RenameByDefault && a.MPSMemoryLimit == b.MPSMemoryLimit &&
		a.FailRequestsGreaterThanOne == b.FailRequestsGreaterThanOne &&
		slices.EqualFunc(a.CustomProfiles, b.CustomProfiles, slices.Equal[[]string]) &&
		slices.EqualFunc(a.Resources, b.Resources, sameReplicated)
}

func sameReplicated(a, b devices.ReplicatedResource) bool {
	return a.Name == b.Name && a.Rename == b.Rename && a.Replicas == b.Replicas && a.DeviceCount == b.DeviceCount &&
		slices.Equal(a.Devices, b.Devices)
}

// twinKey renders what sameConfig compares, so equal keys mean twins.
func twinKey(n *Node, gpus []devices.GPU) string {
	var b strings.Builder
	b.WriteString(strconv.FormatBool(n.Unschedulable) + strconv.FormatBool(n.Ready) + strconv.FormatBool(n.Devices == nil))
	for _, name := range n.Allocatable.Names() {
		b.WriteString("|" + strconv.Quote(string(name)) + "=" + strconv.FormatInt(int64(n.Allocatable[name]), 10))
	}
	for _, t := range n.Taints {
		writeTaint(&b, &t)
	}
	for _, g := range gpus {
		b.WriteString("|gpu" + strconv.Itoa(g.Index) + strconv.Quote(string(g.Model)) + strconv.Itoa(g.NVLinkDomain) +
			"," + strconv.Itoa(g.PCIeSwitch) + strconv.FormatBool(g.Healthy))
		s := g.Sharing
		b.WriteString(strconv.Quote(string(s.Mode)) + strconv.Quote(string(s.MIGStrategy)) + strconv.Quote(s.Layout) +
			strconv.Itoa(s.Replicas) + strconv.FormatBool(s.RenameByDefault) + strconv.FormatInt(int64(s.MPSMemoryLimit), 10) +
			strconv.FormatBool(s.FailRequestsGreaterThanOne))
		for _, r := range s.Resources {
			b.WriteString("{" + strconv.Quote(string(r.Name)) + strconv.Quote(string(r.Rename)) + strconv.Itoa(r.Replicas) +
				"," + strconv.Itoa(r.DeviceCount))
			for _, d := range r.Devices {
				b.WriteString(strconv.Quote(d))
			}
		}
		for _, ps := range s.CustomProfiles {
			b.WriteString("[")
			for _, p := range ps {
				b.WriteString(strconv.Quote(p))
			}
		}
		for _, in := range g.Instances {
			b.WriteString("@" + strconv.Quote(in.Profile) + strconv.Itoa(in.Start))
		}
	}
	return b.String()
}

func writeTaint(b *strings.Builder, t *corev1.Taint) {
	b.WriteString("|taint" + strconv.Quote(t.Key) + strconv.Quote(t.Value) + strconv.Quote(string(t.Effect)))
}
