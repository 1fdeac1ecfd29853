package dra

import (
	"fmt"

	"github.com/gantry-sched/gantry/pkg/devices"
	resourcev1 "k8s.io/api/resource/v1"
)

// podFilter is a pod's claims as the device model's filter: Fit lists the free devices
// and the claims choose among them.
type podFilter struct {
	pc *PodClaims
	// refused, when set, receives the typed refusal (Explain); nil in requests, so the
	// filter itself holds no state.
	refused **Refusal
}

// sizedFilter is podFilter for claims with an allocationMode All request: Fit also
// shows it the held devices, since such a request takes every matching device of the
// node and fails if any is held.
type sizedFilter struct{ podFilter }

// filter is the pod's claims as a devices.Filter, sized when a request takes All.
func (pc *PodClaims) filter(refused **Refusal) devices.Filter {
	f := podFilter{pc: pc, refused: refused}
	if pc.sized {
		return sizedFilter{f}
	}
	return f
}

func (f podFilter) Key() string { return f.pc.key }

// Allows keeps the devices some consuming request's selectors match, and those a
// selector fails on (so Choose refuses the node for the error, as upstream does).
func (f podFilter) Allows(c devices.Candidate) bool {
	e := f.pc.evaluateCandidate(&c)
	for i := range f.pc.parts {
		if f.pc.parts[i].admin {
			continue
		}
		for a := range f.pc.parts[i].alts {
			if k := f.pc.altIndex(i, a); e.ok[k] || e.errs[k] != nil {
				return true
			}
		}
	}
	return false
}

// Choose picks want candidates meeting every request, selector and constraint.
func (f podFilter) Choose(cands []devices.Candidate, _ int) ([]int, string) {
	return f.pick(cands, nil)
}

// ChooseSized is Choose knowing the node's held devices of the kind.
func (f sizedFilter) ChooseSized(cands, held []devices.Candidate, _ int) ([]int, string) {
	return f.pick(cands, held)
}

func (f podFilter) pick(cands, held []devices.Candidate) ([]int, string) {
	ev := f.pc.evaluateAll(cands)
	var hev []*evaluated
	if len(held) > 0 {
		hev = f.pc.evaluateAll(held)
	}
	sol, ref := f.pc.choose(ev, hev)
	if ref != nil {
		if f.refused != nil {
			*f.refused = ref
		}
		return nil, ref.String()
	}
	var picks []int
	for c, p := range sol.assign {
		if p >= 0 {
			picks = append(picks, c)
		}
	}
	return picks, ""
}

func (pc *PodClaims) evaluateAll(cands []devices.Candidate) []*evaluated {
	ev := make([]*evaluated, len(cands))
	for i := range cands {
		ev[i] = pc.evaluateCandidate(&cands[i])
	}
	return ev
}

// choose finds a solution over evaluated candidates (held: the node's held devices of
// the kind, for All requests), or the refusal. A selector that fails at run time on a
// candidate refuses the node, as it stops the upstream allocator.
func (pc *PodClaims) choose(ev, held []*evaluated) (solution, *Refusal) {
	if ref := pc.runtimeErrorRefusal(ev, held); ref != nil {
		return solution{}, ref
	}
	if sol, ok := pc.newMatcher(ev, held).solve(); ok {
		if ref := pc.overClaimLimit(sol); ref != nil {
			return solution{}, ref
		}
		return sol, nil
	}
	return solution{}, pc.diagnose(ev, held)
}

// overClaimLimit refuses a solution in which one claim takes more devices than an
// allocation result may list (resourcev1.AllocationResultsMaxSize): the API server would
// refuse its status.allocation. Only an All request can get there (counts are checked
// when compiled), and it takes every matching device, so no other choice is smaller.
func (pc *PodClaims) overClaimLimit(sol solution) *Refusal {
	per := make(map[int]int, len(pc.claims))
	for _, p := range sol.assign {
		if p < 0 {
			continue
		}
		part := &pc.parts[p]
		if per[part.claim]++; per[part.claim] > resourcev1.AllocationResultsMaxSize {
			ref := pc.refusalFor(ReasonTooMany, part)
			ref.Detail = fmt.Sprintf("more than %d devices for one claim", resourcev1.AllocationResultsMaxSize)
			return ref
		}
	}
	return nil
}

// Explain says why the pod's claims do not fit the node now (nil when they do): which
// claim, request, selector or constraint and device, from the same choice Fit makes.
func (pc *PodClaims) Explain(nd *devices.NodeDevices) *Refusal {
	var got *Refusal
	r := pc.Request()
	if r.IsZero() {
		return nil
	}
	r.Filter = pc.filter(&got)
	_, ref := nd.Fit(r)
	if ref == nil {
		return nil
	}
	if got == nil { // refused before the claims were asked: too few devices of the kind
		got = pc.refusalFor(ReasonNotEnough, pc.firstConsuming())
		got.Request, got.Detail = "", ref.String()
	}
	return got
}
