package devices

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// FitCandidates lists every distinct feasible choice for a request, so a scorer (e.g.
// placement's fragmentation score) can pick among them. Requests for a single device
// (one unit, one replica, one MIG instance or a share) get one candidate per GPU that
// can serve them, in GPU order; larger requests get Fit's one choice. No fit: nil.
func (n *NodeDevices) FitCandidates(r Request) []Assignment {
	if !r.singleDevice() {
		if a, ref := n.Fit(r); ref == nil && !a.IsZero() {
			return []Assignment{a}
		}
		return nil
	}
	var out []Assignment
	for i := range n.gpus {
		if d, ok := n.deviceAt(i, r); ok {
			out = append(out, Assignment{Devices: []Device{d}})
		}
	}
	return out
}

// FitOn fits a single-device request on GPU gpuIndex, for callers that choose the GPU.
func (n *NodeDevices) FitOn(r Request, gpuIndex int) (Assignment, *Refusal) {
	if !r.singleDevice() {
		return Assignment{}, &Refusal{Resource: resources.NvidiaGPU, Reason: fmt.Sprintf("request %s needs more than one device; use Fit", r)}
	}
	pos, ok := n.find(gpuIndex)
	if !ok {
		return Assignment{}, &Refusal{Resource: resources.NvidiaGPU, Reason: fmt.Sprintf("no GPU-%d on the node", gpuIndex)}
	}
	d, ok := n.deviceAt(pos, r)
	if !ok {
		return Assignment{}, &Refusal{Resource: r.Vector().Names()[0], Reason: fmt.Sprintf("GPU-%d cannot serve %s now", gpuIndex, r)}
	}
	return Assignment{Devices: []Device{d}}, nil
}

// singleDevice reports whether a well-formed request asks for exactly one device.
func (r Request) singleDevice() bool {
	if r.kindRefusal() != nil || r.IsZero() {
		return false
	}
	switch {
	case r.IsFraction():
		return true
	case r.Units > 0:
		return r.Units == 1
	case r.Shared > 0:
		return r.Shared == 1
	}
	return len(r.MIG) == 1 && r.MIG[0].Count == 1
}

// deviceAt is the device the GPU at pos would give a single-device request now,
// through the request's filter when it has one.
func (n *NodeDevices) deviceAt(pos int, r Request) (Device, bool) {
	if r.Filter != nil {
		if r.filterKindRefusal() != nil {
			return Device{}, false
		}
		return n.filteredDeviceFor(pos, r)
	}
	return n.gpus[pos].deviceFor(r)
}

// deviceFor is the device GPU g would give a single-device request now: a whole GPU,
// its lowest free matching MIG instance or replica, or a share.
func (g *gpuState) deviceFor(r Request) (Device, bool) {
	if !eligible(g, r) {
		return Device{}, false
	}
	s := g.sharing
	switch {
	case r.IsFraction():
		if g.kind == unitShare && !g.wholeUsed && g.shareFits(r) {
			return g.shareDevice(r), true
		}
	case r.Units > 0:
		switch g.kind {
		case unitWhole, unitShare:
			if g.entirelyFree() {
				return Device{GPU: g.spec.Index, Kind: WholeGPU, Milli: resources.MilliPerGPU, Memory: g.model.Memory}, true
			}
		case unitMIG:
			if s.EffectiveMIGStrategy() == MIGSingle {
				return g.freeUnit(r, "", false)
			}
		case unitReplica:
			if !s.RenameByDefault {
				return g.freeReplica()
			}
		}
	case r.Shared > 0:
		if g.kind == unitReplica && s.RenameByDefault {
			return g.freeReplica()
		}
		if g.kind == unitMIG && s.EffectiveMIGStrategy() == MIGSingle {
			return g.freeUnit(r, "", true)
		}
	default:
		if g.kind == unitMIG && s.EffectiveMIGStrategy() == MIGMixed {
			return g.freeUnit(r, r.MIG[0].Profile, r.MIG[0].Shared)
		}
	}
	return Device{}, false
}

// freeUnit is g's lowest free MIG unit serving the request (see unitMatches).
func (g *gpuState) freeUnit(r Request, profile string, shared bool) (Device, bool) {
	for k := range g.units {
		if g.unitMatches(k, r, profile, shared) {
			return g.unitDevice(k), true
		}
	}
	return Device{}, false
}

func (g *gpuState) freeReplica() (Device, bool) {
	for k, used := range g.replicaUsed {
		if !used {
			return g.replicaDevice(k), true
		}
	}
	return Device{}, false
}
