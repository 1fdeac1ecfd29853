package devices

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// heldCandidates lists the devices of r's kind that are held on the node, as a sized
// filter must see them: whole GPUs that would be candidates if nothing held them, or
// the held MIG instances of r's profiles (mixed strategy), by GPU index.
func (n *NodeDevices) heldCandidates(r Request) []Candidate {
	var out []Candidate
	for i := range n.gpus {
		g := &n.gpus[i]
		if !eligible(g, r) {
			continue
		}
		if r.Units > 0 {
			whole := g.kind == unitWhole || g.kind == unitShare || g.kind == unitDynamic
			if whole && !g.entirelyFree() {
				out = append(out, n.wholeCandidate(i))
			}
			continue
		}
		if g.kind != unitMIG || g.sharing.EffectiveMIGStrategy() != MIGMixed {
			continue
		}
		for k := range g.units {
			if u := &g.units[k]; g.instUsed[k] && u.replica < 0 && !u.shared && wantsProfile(r, u.profile) {
				out = append(out, n.unitCandidate(i, k))
			}
		}
	}
	return out
}

func wantsProfile(r Request, profile string) bool {
	for _, mc := range r.MIG {
		if mc.Profile == profile {
			return true
		}
	}
	return false
}

// sizedDynamicRefusal refuses a sized MIG request on a node with a dynamic GPU that can
// carve one of its profiles: "every matching device" would then be every placement of
// the profile, which the device model does not carve at once.
func (n *NodeDevices) sizedDynamicRefusal(r Request, name resources.Name) *Refusal {
	if len(r.MIG) == 0 {
		return nil
	}
	var ids []string
	for i := range n.gpus {
		g := &n.gpus[i]
		if g.kind != unitDynamic || !eligible(g, r) {
			continue
		}
		for _, mc := range r.MIG {
			if g.profileIndex(mc.Profile) >= 0 {
				ids = append(ids, GPUID(g.spec.Index))
				break
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	return &Refusal{Resource: name, Reason: fmt.Sprintf("a request for every matching MIG device (allocationMode All) cannot take the placements of %s (MIG layout chosen at allocation time): use a fixed layout",
		strings.Join(ids, ", "))}
}

// sizedDeviceOn is the device GPU pos gives a sized single-device request: the one
// device Fit picks, when that is on this GPU (a sized request's count is only known
// from the whole node).
func (n *NodeDevices) sizedDeviceOn(pos int, r Request) (Device, bool) {
	a, ref := n.fitFiltered(r)
	if ref != nil || len(a.Devices) != 1 || a.Devices[0].GPU != n.gpus[pos].spec.Index {
		return Device{}, false
	}
	return a.Devices[0], true
}

// sortByPlace orders picks by GPU index, then MIG start slot.
func sortByPlace(cands []Candidate, picks []int) {
	start := func(c *Candidate) int {
		if c.Instance == nil {
			return -1
		}
		return c.Instance.Start
	}
	slices.SortFunc(picks, func(a, b int) int {
		ca, cb := &cands[a], &cands[b]
		return cmp.Or(cmp.Compare(ca.GPU.Index, cb.GPU.Index), cmp.Compare(start(ca), start(cb)))
	})
}
