package placement

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// whatIf is the what-if surface victim search and reservations need: release a running
// gang's pods, ask whether the preemptor's gang now fits, and roll back. The real one
// wraps a *cluster.Overlay (preempt_overlay.go); tests use small models.
type whatIf interface {
	mark() int
	undo(m int)
	// check says whether r's pods are all there to be released, without changing anything.
	check(r *Running) error
	// release frees every pod of r; an error means r's pods are not where it says.
	release(r *Running) error
	// fits reports whether the whole gang can be placed now, leaving no trace.
	fits() bool
	// touches reports whether r (released earlier) holds pods on a node the latest
	// successful fits() placed the gang on; a model without placements says true.
	touches(r *Running) bool
}

// search is the outcome of the victim search before it is turned into a result.
type search struct {
	outcome PreemptOutcome
	chosen  []Running // victims, in preemption order
	skipped []Skipped
}

// chooseVictims is victim selection on any whatIf: policy, eligibility, order, search.
// Skipped entries come back sorted by workload.
func chooseVictims(w whatIf, req PreemptionRequest) search {
	if req.Policy == api.PreemptNever {
		out := search{outcome: PreemptPolicyNever, skipped: skipAll(req.Running, SkipPriority, "the preemption policy is Never")}
		if w.fits() {
			out.outcome = PreemptNotNeeded
		}
		return out
	}
	cands, skipped := eligible(req)
	orderCandidates(cands, req.Now)
	s := searchVictims(w, cands, newBudgetLedger(req))
	s.skipped = append(skipped, s.skipped...)
	sort.SliceStable(s.skipped, func(i, j int) bool { return s.skipped[i].Workload < s.skipped[j].Workload })
	return s
}

// searchVictims picks whole gangs to free, in the order of cands (already sorted),
// within budgets. It first searches ignoring budgets and keeps that answer when it is
// within them; otherwise it drops, in preemption order, every candidate the budgets
// cannot afford and searches again, so a cheap gang that does not help never uses up a
// queue's budget ahead of one that does. The overlay is back at its starting mark when
// it returns.
func searchVictims(w whatIf, cands []Running, ledger *budgetLedger) search {
	base := w.mark()
	defer w.undo(base)
	if w.fits() {
		return search{outcome: PreemptNotNeeded, skipped: skipAll(cands, SkipNotNeeded, "the gang fits without preemption")}
	}
	var checked []Running
	var bad []Skipped
	for _, c := range cands {
		// A candidate whose pods are not where it says is skipped, not fatal.
		if err := w.check(&c); err != nil {
			bad = append(bad, Skipped{c.ID, SkipNoHelp, err.Error()})
			continue
		}
		checked = append(checked, c)
	}
	out := searchWithin(w, base, checked)
	if out.outcome == PreemptFound && !ledger.allows(out.chosen) {
		list, over := ledger.filter(checked)
		out = searchWithin(w, base, list)
		out.skipped = append(out.skipped, over...)
	}
	out.skipped = append(out.skipped, bad...)
	return out
}

// searchWithin finds the victims among list, in its order: the shortest prefix whose
// removal lets the gang fit (relying on freeing more never making a gang fit less),
// pruned of victims away from the gang's nodes, then minimised by putting back each
// victim, last chosen first, that is not needed.
func searchWithin(w whatIf, base int, list []Running) search {
	if len(list) == 0 {
		return search{outcome: PreemptNoCandidates}
	}
	if !fitsWithout(w, base, list) {
		why := fmt.Sprintf("removing all %d eligible gangs still leaves the gang unplaced", len(list))
		return search{outcome: PreemptStillNoFit, skipped: skipAll(list, SkipNoHelp, why)}
	}
	k := shortestPrefix(w, base, list)
	if k > len(list) {
		// The probe answered differently for the same victims: ties between nodes are
		// broken by the placer's random source, which moves on between probes, and a gang
		// whose pods must follow its first pod (a shared DRA claim) may fit after one
		// tie-break and not after another. Take no chance on a partial answer.
		why := fmt.Sprintf("removing all %d eligible gangs does not reliably place the gang", len(list))
		return search{outcome: PreemptStillNoFit, skipped: skipAll(list, SkipNoHelp, why)}
	}
	chosen, dropped := prune(w, base, list[:k])
	kept, more := minimise(w, base, chosen)
	out := search{outcome: PreemptFound, chosen: kept}
	out.skipped = append(out.skipped, skipAll(append(dropped, more...), SkipNotNeeded, "the gang fits without preempting it")...)
	out.skipped = append(out.skipped, skipAll(list[k:], SkipNotNeeded, "earlier candidates in preemption order free enough")...)
	return out
}

// shortestPrefix finds the fewest leading gangs of list whose removal lets the gang
// fit, given that removing all of them does. It gallops (1, 2, 4, ... gangs) and then
// bisects, so the cost grows with the answer, not with the number of candidates.
func shortestPrefix(w whatIf, base int, list []Running) int {
	hi := 1
	for hi < len(list) && !fitsWithout(w, base, list[:hi]) {
		hi *= 2
	}
	hi = min(hi, len(list))
	lo := hi / 2 // removing list[:lo] does not fit (or lo is 0)
	return lo + sort.Search(hi-lo, func(i int) bool { return fitsWithout(w, base, list[:lo+i+1]) }) + 1
}

// prune drops, in one step, the victims whose pods are not on any node the gang's
// placement uses: they cannot be what makes it fit. It keeps them all if the gang does
// not fit without them (placement may choose other nodes once fewer are free).
func prune(w whatIf, base int, victims []Running) (kept, dropped []Running) {
	if !fitsWithout(w, base, victims) {
		return victims, nil
	}
	for _, v := range victims {
		if w.touches(&v) {
			kept = append(kept, v)
		} else {
			dropped = append(dropped, v)
		}
	}
	if len(dropped) == 0 || len(kept) == 0 || !fitsWithout(w, base, kept) {
		return victims, nil
	}
	return kept, dropped
}

// minimise puts back each victim, last chosen first, whose removal is not needed.
func minimise(w whatIf, base int, victims []Running) (kept, dropped []Running) {
	kept = append([]Running(nil), victims...)
	for i := len(kept) - 1; i >= 0 && len(kept) > 1; i-- {
		without := make([]Running, 0, len(kept)-1)
		without = append(without, kept[:i]...)
		without = append(without, kept[i+1:]...)
		if fitsWithout(w, base, without) {
			dropped = append(dropped, kept[i])
			kept = without
		}
	}
	return kept, dropped
}

// fitsWithout rolls back to base, releases the given gangs and asks whether the gang
// fits. It leaves the releases in place; callers roll back.
func fitsWithout(w whatIf, base int, gone []Running) bool {
	w.undo(base)
	for i := range gone {
		if err := w.release(&gone[i]); err != nil {
			return false
		}
	}
	return w.fits()
}

func skipAll(rs []Running, code SkipCode, detail string) []Skipped {
	out := make([]Skipped, 0, len(rs))
	for _, r := range rs {
		out = append(out, Skipped{r.ID, code, detail})
	}
	return out
}
