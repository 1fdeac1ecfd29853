package devices

import (
	"fmt"
	"slices"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// fitFiltered serves a request with a Filter: the free devices of its kind are listed
// in Fit's order of preference and the filter chooses.
func (n *NodeDevices) fitFiltered(r Request) (Assignment, *Refusal) {
	var cands []Candidate
	var name resources.Name
	want := 0
	if r.Units > 0 {
		cands, name, want = n.wholeCandidates(r), resources.NvidiaGPU, int(r.Units)
	} else {
		cands, name = n.migCandidates(r), r.MIG[0].Resource()
		for _, mc := range r.MIG {
			want += int(mc.Count)
		}
	}
	if len(cands) < want {
		return Assignment{}, &Refusal{Resource: name, Reason: fmt.Sprintf("need %d, %d free (%d GPUs healthy of %d)", want, len(cands), n.healthyCount(), len(n.gpus))}
	}
	sized, isSized := r.Filter.(SizedFilter)
	var picks []int
	var why string
	if isSized {
		if ref := n.sizedDynamicRefusal(r, name); ref != nil {
			return Assignment{}, ref
		}
		picks, why = sized.ChooseSized(cands, n.heldCandidates(r), want)
	} else {
		picks, why = r.Filter.Choose(cands, want)
	}
	if why != "" {
		return Assignment{}, &Refusal{Resource: name, Reason: why}
	}
	if err := checkChoice(r, cands, picks, want, isSized); err != nil {
		return Assignment{}, &Refusal{Resource: name, Reason: err.Error()}
	}
	slices.Sort(picks) // candidate order: the order Fit itself returns devices in
	if isSized {
		sortByPlace(cands, picks) // every matching device: Fit's preference means nothing
	}
	a := Assignment{Devices: make([]Device, len(picks))}
	for i, p := range picks {
		a.Devices[i] = cands[p].Device
	}
	return a, nil
}

// wholeCandidates lists the free whole GPUs: among those the filter allows, the ones
// pickTopology would take first (ascending) and then the others by index; then the
// GPUs the filter rules out, by index.
func (n *NodeDevices) wholeCandidates(r Request) []Candidate {
	var wbuf, abuf, pbuf [scratchGroups]int
	whole := n.freeWhole(r, wbuf[:0])
	out := make([]Candidate, 0, len(whole))
	allowed, ruledOut := abuf[:0], make([]int, 0, len(whole))
	for _, p := range whole {
		if r.Filter.Allows(n.wholeCandidate(p)) {
			allowed = append(allowed, p)
		} else {
			ruledOut = append(ruledOut, p)
		}
	}
	first := pickTopology(n.gpus, allowed, min(int(r.Units), len(allowed)), pbuf[:0])
	for _, p := range first {
		out = append(out, n.wholeCandidate(p))
	}
	for _, p := range append(allowed, ruledOut...) {
		if !slices.Contains(first, p) {
			out = append(out, n.wholeCandidate(p))
		}
	}
	return out
}

func (n *NodeDevices) wholeCandidate(pos int) Candidate {
	g := &n.gpus[pos]
	d := Device{GPU: g.spec.Index, Kind: WholeGPU, Milli: resources.MilliPerGPU, Memory: g.model.Memory}
	return Candidate{GPU: g.spec, Device: d}
}

// migCandidates lists the free whole MIG instances (mixed strategy) of the request's
// profiles, profile by profile in the request's order, fullest GPU first as fitMIG
// takes them, and after each profile's the instances dynamic GPUs would carve for it
// (dynamic_fit.go).
func (n *NodeDevices) migCandidates(r Request) []Candidate {
	var out []Candidate
	var buf [scratchSlots]slot
	plans := n.dynamicPlans(r)
	for _, mc := range r.MIG {
		slots := buf[:0]
		for i := range n.gpus {
			g := &n.gpus[i]
			if !eligible(g, r) || g.kind != unitMIG || g.sharing.EffectiveMIGStrategy() != MIGMixed {
				continue
			}
			free := g.freeUnitCount()
			for k := range g.units {
				if u := &g.units[k]; !g.instUsed[k] && u.replica < 0 && !u.shared && u.profile == mc.Profile {
					slots = append(slots, slot{i, k, free})
				}
			}
		}
		sortFullestFirst(slots)
		for _, s := range slots {
			out = append(out, n.unitCandidate(s.pos, s.k))
		}
		out = n.appendPlanned(out, plans, mc.Profile)
	}
	return out
}

func (n *NodeDevices) unitCandidate(pos, k int) Candidate {
	g := &n.gpus[pos]
	return Candidate{GPU: g.spec, Instance: &g.spec.Instances[g.units[k].inst], Device: g.unitDevice(k)}
}

// checkChoice guards against a filter that broke its contract: want distinct
// positions in range and, for MIG, each profile's count (at least these for a sized
// filter).
func checkChoice(r Request, cands []Candidate, picks []int, want int, sized bool) error {
	if len(picks) != want && (!sized || len(picks) < want) {
		return fmt.Errorf("filter %s chose %d devices, want %d", r.Filter.Key(), len(picks), want)
	}
	seen := make([]bool, len(cands))
	perProfile := map[string]int64{}
	for _, p := range picks {
		if p < 0 || p >= len(cands) || seen[p] {
			return fmt.Errorf("filter %s chose candidate %d twice or out of range", r.Filter.Key(), p)
		}
		seen[p] = true
		if in := cands[p].Instance; in != nil {
			perProfile[in.Profile]++
		}
	}
	for _, mc := range r.MIG {
		if got := perProfile[mc.Profile]; got != mc.Count && (!sized || got < mc.Count) {
			return fmt.Errorf("filter %s chose %d of MIG profile %s, want %d", r.Filter.Key(), perProfile[mc.Profile], mc.Profile, mc.Count)
		}
	}
	return nil
}

// filteredDeviceFor is the device GPU g would give a filtered single-device request
// now (FitCandidates, FitOn): the filter chooses among g's free devices of the kind.
func (n *NodeDevices) filteredDeviceFor(pos int, r Request) (Device, bool) {
	g := &n.gpus[pos]
	if !eligible(g, r) {
		return Device{}, false
	}
	if _, sized := r.Filter.(SizedFilter); sized {
		return n.sizedDeviceOn(pos, r)
	}
	var cands []Candidate
	switch {
	case r.Units > 0 && (g.kind == unitWhole || g.kind == unitShare || g.kind == unitDynamic) && g.entirelyFree():
		cands = []Candidate{n.wholeCandidate(pos)}
	case len(r.MIG) == 1 && g.kind == unitDynamic:
		cands = n.dynamicCandidates(pos, r)
	case len(r.MIG) == 1 && g.kind == unitMIG && g.sharing.EffectiveMIGStrategy() == MIGMixed:
		for k := range g.units {
			if u := &g.units[k]; !g.instUsed[k] && u.replica < 0 && !u.shared && u.profile == r.MIG[0].Profile {
				cands = append(cands, n.unitCandidate(pos, k))
			}
		}
	}
	if len(cands) == 0 {
		return Device{}, false
	}
	picks, why := r.Filter.Choose(cands, 1)
	if why != "" || checkChoice(r, cands, picks, 1, false) != nil {
		return Device{}, false
	}
	return cands[picks[0]].Device, true
}

// filterKindRefusal refuses a filtered request of a kind no filter serves.
func (r Request) filterKindRefusal() *Refusal {
	if r.Filter == nil || r.Units > 0 || len(r.MIG) > 0 && !slices.ContainsFunc(r.MIG, func(mc MIGCount) bool { return mc.Shared }) {
		return nil
	}
	return &Refusal{Resource: r.Vector().Names()[0], Reason: fmt.Sprintf("request %s has a device filter: filtered requests take whole GPUs or MIG instances only", r)}
}
