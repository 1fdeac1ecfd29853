package dra

import (
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
)

// runtimeErrorRefusal is the first selector runtime error on any candidate (or, for an
// All request, which upstream evaluates on every device of the node, any held device),
// in part and candidate order; nil when there is none.
func (pc *PodClaims) runtimeErrorRefusal(ev, held []*evaluated) *Refusal {
	for i := range pc.parts {
		p := &pc.parts[i]
		seen := ev
		if p.all && !p.admin && len(held) > 0 {
			seen = append(append([]*evaluated(nil), ev...), held...)
		}
		for a := range p.alts {
			for _, e := range seen {
				bad := e.errs[pc.altIndex(i, a)]
				if bad == nil {
					continue
				}
				ref := pc.refusalFor(ReasonCELError, p)
				ref.Request = p.resultName(a)
				ref.Class, ref.Field, ref.Selector, ref.Device = bad.sel.class, bad.sel.field, bad.sel.index, e.name
				ref.Detail = fmt.Sprintf("%q: %v", bad.sel.expr, bad.err)
				return ref
			}
		}
	}
	return nil
}

// diagnose explains a failed search: the first request no candidate matches, the first
// with fewer matches than devices, an All request whose devices others hold, the
// requests together short of devices, or else a constraint.
func (pc *PodClaims) diagnose(ev, held []*evaluated) *Refusal {
	for i := range pc.parts {
		if ref := pc.partShortage(i, ev, held); ref != nil {
			return ref
		}
	}
	if !pc.fitsUnconstrained(ev, held) {
		p := pc.firstConsuming()
		ref := pc.refusalFor(ReasonNotEnough, p)
		ref.Request = ""
		ref.Detail = "the claims' requests together need more free matching devices than the node has at once"
		return ref
	}
	if len(pc.constraints) == 0 { // cannot happen: the search without constraints failed above
		return pc.refusalFor(ReasonNotEnough, pc.firstConsuming())
	}
	k := &pc.constraints[0]
	for i := range pc.constraints {
		if pc.constraintBlocks(i, ev, held) {
			k = &pc.constraints[i]
			break
		}
	}
	return &Refusal{Reason: ReasonConstraint, Claim: pc.claims[k.claim].name, Field: k.field + ".matchAttribute", Selector: -1, Constraint: k.index,
		Detail: fmt.Sprintf("no value of %s is shared by enough free matching devices", k.attr)}
}

// partShortage refuses part i when none of its alternatives has enough matching
// candidates on its own, blaming the first alternative.
func (pc *PodClaims) partShortage(i int, ev, held []*evaluated) *Refusal {
	p := &pc.parts[i]
	if p.admin {
		return nil
	}
	if p.all {
		return pc.allShortage(i, ev, held)
	}
	best := 0
	for a := range p.alts {
		n := 0
		for _, e := range ev {
			if e.ok[pc.altIndex(i, a)] {
				n++
			}
		}
		if int64(n) >= p.count {
			return nil
		}
		best = max(best, n)
	}
	if best > 0 {
		ref := pc.refusalFor(ReasonNotEnough, p)
		ref.Detail = fmt.Sprintf("need %d, %d free devices match", p.count, best)
		return ref
	}
	ref := pc.refusalFor(ReasonNoMatch, p)
	pc.blameSelector(ref, i, ev)
	return ref
}

// blameSelector names the selector of part i's first alternative that ruled out the
// most candidates.
func (pc *PodClaims) blameSelector(ref *Refusal, i int, ev []*evaluated) {
	p := &pc.parts[i]
	counts := make([]int, len(p.alts[0].selectors))
	for _, e := range ev {
		if f := e.failed[pc.altIndex(i, 0)]; f >= 0 {
			counts[f]++
		}
	}
	worst := -1
	for s, n := range counts {
		if n > 0 && (worst < 0 || n > counts[worst]) {
			worst = s
		}
	}
	ref.Request = p.resultName(0)
	if worst < 0 {
		ref.Detail = fmt.Sprintf("no free %s device on the node", p.kind)
		return
	}
	s := &p.alts[0].selectors[worst]
	ref.Class, ref.Field, ref.Selector = s.class, s.field, s.index
	ref.Detail = fmt.Sprintf("%q rules out all %d free %s devices", s.expr, len(ev), p.kind)
}

// fitsUnconstrained reports whether the requests could be met ignoring constraints.
func (pc *PodClaims) fitsUnconstrained(ev, held []*evaluated) bool {
	free := *pc
	free.constraints = nil
	_, ok := free.newMatcher(stripAttrs(ev), held).solve()
	return ok
}

// constraintBlocks reports whether constraint i alone makes the search fail.
func (pc *PodClaims) constraintBlocks(i int, ev, held []*evaluated) bool {
	one := *pc
	one.constraints = pc.constraints[i : i+1]
	only := make([]*evaluated, len(ev))
	for c, e := range ev {
		cp := *e
		cp.attrs = e.attrs[i : i+1]
		only[c] = &cp
	}
	_, ok := one.newMatcher(only, held).solve()
	return !ok
}

func stripAttrs(ev []*evaluated) []*evaluated {
	out := make([]*evaluated, len(ev))
	for i, e := range ev {
		cp := *e
		cp.attrs = nil
		out[i] = &cp
	}
	return out
}

// firstConsuming is the first part that takes devices.
func (pc *PodClaims) firstConsuming() *part {
	for i := range pc.parts {
		if !pc.parts[i].admin {
			return &pc.parts[i]
		}
	}
	return &pc.parts[0]
}

// allShortage refuses All part i when no alternative can take every device it matches:
// it matches none (the selector to blame), others hold some of them, or they are more
// than a claim's allocation may list. Nil when some alternative can.
func (pc *PodClaims) allShortage(i int, ev, held []*evaluated) *Refusal {
	p := &pc.parts[i]
	var firstHeld *Refusal
	for a := range p.alts {
		free, h := pc.allMatches(i, a, ev, held)
		switch {
		case h > 0 && firstHeld == nil:
			firstHeld = pc.refusalFor(ReasonHeld, p)
			firstHeld.Request = p.resultName(a)
			firstHeld.Device = firstMatch(held, pc.altIndex(i, a))
			firstHeld.Detail = fmt.Sprintf("allocationMode All takes every matching device: %d of the %d matching devices are held by others", h, free+h)
		case h == 0 && free > resourcev1.AllocationResultsMaxSize:
			ref := pc.refusalFor(ReasonNotEnough, p)
			ref.Request = p.resultName(a)
			ref.Detail = fmt.Sprintf("allocationMode All matches %d devices, more than the %d a claim's allocation may list", free, resourcev1.AllocationResultsMaxSize)
			return ref
		case h == 0 && free > 0:
			return nil
		}
	}
	if firstHeld != nil {
		return firstHeld
	}
	ref := pc.refusalFor(ReasonNoMatch, p)
	pc.blameSelector(ref, i, ev)
	return ref
}

// firstMatch is the name of the first device whose alternative k matches.
func firstMatch(ev []*evaluated, k int) string {
	for _, e := range ev {
		if e.ok[k] {
			return e.name
		}
	}
	return ""
}
