package dra

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// ClaimResult is the allocation of one of a pod's claims, by the pod's claim name.
type ClaimResult struct {
	Claim      string
	Allocation resourcev1.AllocationResult
}

// Results splits the devices assigned to the pod on inv's node (what Fit returned for
// Request) into one allocation per claim, as kube-scheduler's allocator writes them:
// one result per device naming the request ("request/subrequest" for firstAvailable),
// the driver, the pool (the node) and the device; adminAccess on admin-access requests;
// the class configs of the chosen classes and the claim's configs; a node selector on
// metadata.name. Devices are matched to requests again by the same rules Fit used;
// admin-access requests get the first matching published devices, held or not (they
// consume nothing; the claim's constraints do not apply to them). An assignment the
// claims cannot be met with is an error.
func (pc *PodClaims) Results(inv *NodeInventory, a devices.Assignment) ([]ClaimResult, error) {
	published := map[string]*resourcev1.Device{}
	all := inv.Devices()
	for i := range all {
		published[all[i].Name] = &all[i]
	}
	ev := make([]*evaluated, len(a.Devices))
	assigned := map[string]bool{}
	for i, d := range a.Devices {
		e, err := pc.evaluatePublished(inv, published, d)
		if err != nil {
			return nil, err
		}
		ev[i], assigned[e.name] = e, true
	}
	if want := pc.Request(); !pc.sized && int64(len(a.Devices)) != want.Units+migTotal(want) {
		return nil, fmt.Errorf("node %s: assignment %s has %d devices, the claims take %d", inv.Node(), a, len(a.Devices), want.Units+migTotal(want))
	}
	sol, ref := pc.choose(ev, pc.othersPublished(all, assigned))
	if ref != nil {
		return nil, fmt.Errorf("node %s: assignment %s does not meet the claims: %s", inv.Node(), a, ref)
	}
	picked := make([][]string, len(pc.parts))
	for c, p := range sol.assign {
		if p >= 0 {
			picked[p] = append(picked[p], ev[c].name)
		}
	}
	if n := len(slices.Concat(picked...)); n != len(a.Devices) {
		return nil, fmt.Errorf("node %s: assignment %s has %d devices, the claims take %d of them", inv.Node(), a, len(a.Devices), n)
	}
	if err := pc.pickAdmin(all, picked, sol.alt); err != nil {
		return nil, fmt.Errorf("node %s: %w", inv.Node(), err)
	}
	out := make([]ClaimResult, len(pc.claims))
	for ci := range pc.claims {
		out[ci] = ClaimResult{Claim: pc.claims[ci].name, Allocation: pc.allocation(ci, inv.Node(), picked, sol.alt)}
	}
	return out, nil
}

func migTotal(r devices.Request) int64 {
	var n int64
	for _, mc := range r.MIG {
		n += mc.Count
	}
	return n
}

// othersPublished evaluates the published devices outside the assignment, for All
// requests (which must have been given every device they match); nil without one.
func (pc *PodClaims) othersPublished(all []resourcev1.Device, assigned map[string]bool) []*evaluated {
	if !pc.sized {
		return nil
	}
	var out []*evaluated
	for i := range all {
		if d := &all[i]; !assigned[d.Name] {
			kind, profile := publishedKind(d)
			out = append(out, pc.evaluate(d, kind, profile))
		}
	}
	return out
}

// evaluatePublished evaluates the published device behind Gantry device d.
func (pc *PodClaims) evaluatePublished(inv *NodeInventory, published map[string]*resourcev1.Device, d devices.Device) (*evaluated, error) {
	name, ok := inv.DeviceName(d.ID())
	if !ok {
		return nil, fmt.Errorf("node %s: device %s is not a DRA device (replicas and shares are not published)", inv.Node(), d.ID())
	}
	dev, ok := published[name]
	if !ok {
		return nil, fmt.Errorf("node %s: device %s (%s) is not published: its GPU is unhealthy", inv.Node(), d.ID(), name)
	}
	kind, profile := kindGPU, ""
	if d.Kind == devices.MIGDevice {
		kind, profile = kindMIG, d.Instance.Profile
	}
	return pc.evaluate(dev, kind, profile), nil
}

// pickAdmin gives every admin-access part its devices: for each alternative in turn,
// the first published devices that match and that the claim does not hold already.
func (pc *PodClaims) pickAdmin(all []resourcev1.Device, picked [][]string, alt []int) error {
	for i := range pc.parts {
		p := &pc.parts[i]
		if !p.admin {
			continue
		}
		if !pc.pickAdminPart(i, all, picked, alt) {
			return fmt.Errorf("claim %s request %s: %s devices with admin access: too few published devices match (or, for All, the claim holds one already)", pc.claims[p.claim].name, p.request, countWords(p.count, p.all))
		}
	}
	return nil
}

// An All part takes every matching device, and none of them may be one its claim
// holds already (upstream refuses a claim's device twice even with admin access).
func (pc *PodClaims) pickAdminPart(i int, all []resourcev1.Device, picked [][]string, alt []int) bool {
	p := &pc.parts[i]
	held := pc.claimDevices(p.claim, picked)
	for a := range p.alts {
		var got []string
		clash := false
		for k := range all {
			d := &all[k]
			kind, profile := publishedKind(d)
			e := pc.evaluate(d, kind, profile)
			if !e.ok[pc.altIndex(i, a)] || e.errs[pc.altIndex(i, a)] != nil {
				continue
			}
			switch {
			case slices.Contains(held, d.Name):
				clash = clash || p.all
			case p.all || int64(len(got)) < p.count:
				got = append(got, d.Name)
			}
		}
		if p.all && !clash && len(got) > 0 || !p.all && int64(len(got)) == p.count {
			picked[i], alt[i] = got, a
			return true
		}
	}
	return false
}

// claimDevices lists the devices already picked for claim ci.
func (pc *PodClaims) claimDevices(ci int, picked [][]string) []string {
	var out []string
	for i := range pc.parts {
		if pc.parts[i].claim == ci {
			out = append(out, picked[i]...)
		}
	}
	return out
}

// publishedKind reads a published device's type and MIG profile.
func publishedKind(d *resourcev1.Device) (deviceKind, string) {
	if t := d.Attributes[AttrType]; t.StringValue != nil && *t.StringValue == DeviceTypeMIG {
		p := d.Attributes[AttrProfile]
		return kindMIG, ptr.Deref(p.StringValue, "")
	}
	return kindGPU, ""
}

// allocation is claim ci's AllocationResult.
func (pc *PodClaims) allocation(ci int, node string, picked [][]string, alt []int) resourcev1.AllocationResult {
	var res resourcev1.AllocationResult
	for i := range pc.parts {
		p := &pc.parts[i]
		if p.claim != ci {
			continue
		}
		for _, name := range picked[i] {
			r := resourcev1.DeviceRequestAllocationResult{Request: p.resultName(alt[i]), Driver: DriverName, Pool: node, Device: name}
			if p.admin {
				r.AdminAccess = ptr.To(true)
			}
			res.Devices.Results = append(res.Devices.Results, r)
		}
	}
	res.Devices.Config = pc.configs(ci, alt)
	res.NodeSelector = &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
	}}}
	return res
}

// configs are claim ci's allocation configs as the upstream allocator writes them: each
// chosen class's configs once (naming every request that chose the class), then the
// claim's configs that apply to all requests or name a request (or the chosen
// "request/subrequest").
func (pc *PodClaims) configs(ci int, alt []int) []resourcev1.DeviceAllocationConfiguration {
	var out []resourcev1.DeviceAllocationConfiguration
	classAt := map[string][2]int{}
	var chosen []string
	for i := range pc.parts {
		p := &pc.parts[i]
		if p.claim != ci {
			continue
		}
		name, class := p.resultName(alt[i]), p.alts[alt[i]].class
		chosen = append(chosen, p.request, name)
		if at, ok := classAt[class.name]; ok {
			for k := at[0]; k < at[1]; k++ {
				out[k].Requests = append(out[k].Requests, name)
			}
			continue
		}
		start := len(out)
		for _, c := range class.config {
			out = append(out, resourcev1.DeviceAllocationConfiguration{Source: resourcev1.AllocationConfigSourceClass, Requests: []string{name}, DeviceConfiguration: c.DeviceConfiguration})
		}
		classAt[class.name] = [2]int{start, len(out)}
	}
	for _, c := range pc.claims[ci].spec.Devices.Config {
		if len(c.Requests) == 0 || slices.ContainsFunc(c.Requests, func(r string) bool { return slices.Contains(chosen, r) }) {
			out = append(out, resourcev1.DeviceAllocationConfiguration{Source: resourcev1.AllocationConfigSourceClaim, Requests: c.Requests, DeviceConfiguration: c.DeviceConfiguration})
		}
	}
	return out
}
