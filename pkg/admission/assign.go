package admission

import (
	"fmt"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Assign chooses flavors for every pod set of wl in ClusterQueue cq against the current
// usage, the way Kueue's flavor assigner does: per pod set and resource group, flavors in
// the listed order; a flavor must admit the pod set (node labels, taints) and is rated
// Fit, Borrow, Preempt or NoFit; flavorFungibility decides whether the search stops at a
// borrowing or preempting flavor. Earlier pod sets' usage counts when rating later ones.
// The result is a value; nothing is reserved.
func (q *Quota) Assign(wl *api.Workload, cq string) Assignment {
	return q.AssignWithout(wl, cq, nil)
}

// AssignWithout is Assign with some flavors ruled out by the caller, e.g. the flavors
// placement could not use this cycle (spot → on-demand fallback). Excluded flavors are
// listed in Tried with code NoFlavorMatches and the reason "excluded by the caller".
func (q *Quota) AssignWithout(wl *api.Workload, cq string, without map[string]bool) Assignment {
	return q.assign(wl, cq, without, false)
}

// AssignBlocked is Assign for a head whose ClusterQueue may preempt nothing: where only
// preemption could make room it answers mode Preempt, as Kueue's flavor assigner does,
// rather than NoFit (Assign's answer, since no victim may be taken). A cycle sizes the
// quota it holds for such a head from it (Unreclaimable).
func (q *Quota) AssignBlocked(wl *api.Workload, cq string) Assignment {
	return q.assign(wl, cq, nil, true)
}

// assign is Assign; blocked keeps mode Preempt in queues that cannot preempt.
func (q *Quota) assign(wl *api.Workload, cq string, without map[string]bool, blocked bool) Assignment {
	a := Assignment{ClusterQueue: cq}
	if wl == nil {
		a.Code, a.Message = InvalidWorkload, "nil workload"
		return a
	}
	a.Workload = wl.ID()
	n, ok := q.s.cqID(cq)
	if !ok {
		a.Code, a.Message = ClusterQueueMissing, fmt.Sprintf("clusterqueue %q does not exist", cq)
		return a
	}
	if len(wl.PodSets) == 0 {
		a.Code, a.Message = InvalidWorkload, fmt.Sprintf("workload %s: no pod sets", a.Workload)
		return a
	}
	as := &assigner{q: q, wl: wl, cq: n, node: q.s.nodes[n], assumed: map[frID]resources.Amount{}, without: without, blocked: blocked}
	a.Mode = Fit
	for i := range wl.PodSets {
		ps := &wl.PodSets[i]
		as.ps = append(as.ps, ps)
		psa := as.podSet(ps)
		if psa.Mode < a.Mode || (psa.Mode == a.Mode && a.Code == ReasonNone) {
			a.Mode, a.Code = psa.Mode, psa.Code
			if psa.Code != ReasonNone {
				a.why = len(a.PodSets) + 1
			}
		}
		a.PodSets = append(a.PodSets, psa)
	}
	a.Own = as.own
	if a.Mode == NoFit {
		return a
	}
	as.fillUsage(&a)
	return a
}

// Why is one line for humans on why the assignment is what it is: Message where that
// was set, else the first reason of the pod set that decided the mode (rendered here,
// not in the cycle). Details are in PodSets[i].Tried.
func (a Assignment) Why() string {
	if a.Message != "" || a.why == 0 || a.why > len(a.PodSets) {
		return a.Message
	}
	ps := a.PodSets[a.why-1]
	return fmt.Sprintf("pod set %q: %s", ps.Name, firstReason(ps))
}

// firstReason prefers a flavor tried with the pod set's mode, and a flavor the search
// weighed over one the caller ruled out (a fallback's excluded flavor says nothing about
// why the others refused).
func firstReason(p PodSetAssignment) string {
	for _, ok := range []func(FlavorAttempt) bool{
		func(t FlavorAttempt) bool { return t.Mode == p.Mode && !t.excluded() },
		func(t FlavorAttempt) bool { return !t.excluded() },
		func(FlavorAttempt) bool { return true },
	} {
		for _, t := range p.Tried {
			if len(t.Reasons) > 0 && ok(t) {
				return inFlavor(t.Flavor, t.Reasons[0].String())
			}
		}
	}
	return string(p.Code)
}

// excludedByCaller is the reason of a flavor AssignWithout was told to skip.
const excludedByCaller = "excluded by the caller"

func (t FlavorAttempt) excluded() bool {
	return t.Code == NoFlavorMatches && len(t.Reasons) == 1 && t.Reasons[0].Kind == WhyText && t.Reasons[0].Text == excludedByCaller
}

// inFlavor prefixes a reason with its flavor; a pod set refused before any flavor was
// tried (a resource no group covers, an invalid request) has none to name.
func inFlavor(flavor, reason string) string {
	if flavor == "" {
		return reason
	}
	return fmt.Sprintf("flavor %s: %s", flavor, reason)
}

// assigner carries one Assign call's state: the usage of pod sets assigned so far.
type assigner struct {
	q       *Quota
	wl      *api.Workload
	cq      nodeID
	node    treeNode
	assumed map[frID]resources.Amount
	ps      []*api.PodSet
	without map[string]bool // flavors the caller ruled out
	blocked bool            // AssignBlocked: keep Preempt where no preemption is possible
	own     bool            // a preemption was simulated for wl (Assignment.Own)
}

func (as *assigner) podSet(ps *api.PodSet) PodSetAssignment {
	out := PodSetAssignment{Name: ps.Name, Count: ps.Count, Mode: Fit}
	if ps.Count <= 0 {
		out.Mode, out.Code = NoFit, InvalidWorkload
		out.Tried = []FlavorAttempt{{Mode: NoFit, Code: InvalidWorkload, Reasons: []Why{textWhy(fmt.Sprintf("count %d must be positive", ps.Count))}}}
		return out
	}
	need, err := as.q.s.needs(as.cq, ps)
	if err != nil {
		out.Mode, out.Code = NoFit, ResourceNotCovered
		out.Tried = []FlavorAttempt{{Mode: NoFit, Code: ResourceNotCovered, Reasons: []Why{textWhy(err.Error())}}}
		return out
	}
	for _, g := range need.sortedGroups() {
		best, tried := as.group(need, g)
		out.Tried = append(out.Tried, tried...)
		if best == nil {
			out.Mode, out.Code, out.Resources = NoFit, groupCode(tried), nil
			return out
		}
		if best.mode < out.Mode {
			out.Mode = best.mode
		}
		out.Resources = append(out.Resources, best.resources...)
		for _, c := range best.cells {
			as.assumed[c.fr] += c.amount
		}
	}
	sort.Slice(out.Resources, func(i, j int) bool { return out.Resources[i].Resource < out.Resources[j].Resource })
	if out.Mode == Preempt {
		out.Code = WaitingForQuota
	}
	return out
}

// groupCode explains a resource group for which no flavor can work.
func groupCode(tried []FlavorAttempt) ReasonCode {
	code := NoFlavorMatches
	for _, t := range tried {
		switch t.Code {
		case WaitingForQuota:
			return WaitingForQuota
		case ExceedsMaxQuota, ResourceNotCovered, InvalidWorkload:
			code = t.Code
		}
	}
	return code
}

// flavorChoice is one flavor's rating for a resource group.
type flavorChoice struct {
	mode      Mode
	rank      rank
	resources []ResourceAssignment
	cells     []cell
	// short are the cells that need preemption, not yet simulated (rank then counts
	// them as kindPreempt): simulating is only worth it when the kind can change the
	// choice (resolve). fits is the rank of the other cells.
	short []cell
	fits  rank
}

// group tries the flavors of resource group g in order and returns the best choice (nil
// when every flavor is NoFit) and an attempt record per flavor tried. As in Kueue, a
// flavor that needs preemption is rated by simulating it (rank): reclaiming from
// borrowing queues beats preempting in the preemptor's own queue, and a flavor where no
// workload could be preempted never ends the search. flavorFungibility decides whether
// a borrowing or preempting flavor ends it (tryNext).
func (as *assigner) group(need podSetNeed, g int) (*flavorChoice, []FlavorAttempt) {
	rg := as.node.cq.ResourceGroups[g]
	fung := as.node.cq.FlavorFungibility
	var best *flavorChoice
	var tried []FlavorAttempt
	for k, fq := range rg.Flavors {
		flavor := as.q.s.flavors[fq.Name]
		if as.without[fq.Name] {
			tried = append(tried, FlavorAttempt{Flavor: fq.Name, Mode: NoFit, Code: NoFlavorMatches, Reasons: []Why{textWhy(excludedByCaller)}})
			continue
		}
		if ok, why := flavorAdmits(flavor, need.ps); !ok {
			tried = append(tried, FlavorAttempt{Flavor: fq.Name, Mode: NoFit, Code: NoFlavorMatches, Reasons: []Why{textWhy(why)}})
			continue
		}
		choice, attempt := as.rate(need, g, flavor)
		tried = append(tried, attempt)
		if choice.mode == NoFit {
			continue
		}
		// Whether a preempting flavor ends the search depends on its kind only under
		// these policies, and only when another flavor could be chosen instead.
		// Under PreemptionOverBorrowing the level after preemption orders flavors too.
		if (best != nil || k < len(rg.Flavors)-1) && (fung.WhenCanPreempt == api.MayStopSearch || fung.WhenCanBorrow == api.TryNextFlavor ||
			fung.Preference == api.PreemptionOverBorrowing) {
			as.resolve(&choice)
		}
		if !tryNext(choice.rank, fung) {
			best = &choice
			break
		}
		if best == nil {
			best = &choice
			continue
		}
		if choice.mode == Preempt && best.mode == Preempt {
			as.resolve(&choice)
			as.resolve(best)
		}
		if preferred(choice.rank, best.rank, fung.Preference) {
			best = &choice
		}
	}
	return best, tried
}

// resolve simulates the preemption a choice's short cells need and ranks it by the
// worst of them (Kueue's preemption oracle, per flavor and resource).
func (as *assigner) resolve(c *flavorChoice) {
	if len(c.short) == 0 {
		return
	}
	as.own = true
	r := c.fits
	for _, sc := range c.short {
		r = worse(r, as.q.simulatePreemption(as.wl, as.cq, sc.fr, sc.amount), as.pref())
	}
	c.rank, c.short = r, nil
}

// rate rates one flavor for the resources the pod set needs from group g.
func (as *assigner) rate(need podSetNeed, g int, flavor *api.ResourceFlavor) (flavorChoice, FlavorAttempt) {
	choice := flavorChoice{mode: Fit, rank: bestRank, fits: bestRank}
	attempt := FlavorAttempt{Flavor: flavor.Name, Mode: Fit}
	worst := func(m Mode, code ReasonCode) {
		if m < choice.mode {
			choice.mode, attempt.Mode, attempt.Code = m, m, code
		}
		if m == NoFit {
			choice.rank = rank{}
		}
	}
	if n := len(need.groups[g]); n > 0 {
		// One allocation each rather than a growth per resource (sized for the loop and
		// the no-preemption reason); left nil when nothing is appended, as before.
		attempt.Reasons = make([]Why, 0, n+1)
		choice.resources = make([]ResourceAssignment, 0, n)
		choice.cells = make([]cell, 0, n)
	}
	for _, r := range need.groups[g] {
		amount, err := as.q.s.amount(need, r, flavor)
		if err != nil {
			worst(NoFit, InvalidWorkload)
			attempt.Reasons = append(attempt.Reasons, textWhy(err.Error()))
			continue
		}
		f, ok := as.q.s.frIndex[FlavorResource{flavor.Name, r}]
		if !ok || !as.q.hasQuotaEntry(as.cq, g, flavor.Name, r) {
			worst(NoFit, ExceedsMaxQuota)
			attempt.Reasons = append(attempt.Reasons, Why{Kind: WhyNoQuota, Resource: r, Flavor: flavor.Name})
			continue
		}
		total := resources.SatAdd(amount, as.assumed[f])
		m, code, why := as.q.rateCell(as.cq, f, amount, as.assumed[f])
		if m == Preempt && !as.q.mayPreemptFor(as.cq, f, total) {
			m = NoFit // Kueue looks for no victims here: the workload waits for quota
		}
		worst(m, code)
		cr := as.cellRank(m, f, total)
		choice.rank = worse(choice.rank, cr, as.pref())
		if m == Preempt {
			choice.short = append(choice.short, cell{f, total})
		} else {
			choice.fits = worse(choice.fits, cr, as.pref())
		}
		attempt.Reasons = append(attempt.Reasons, why)
		choice.resources = append(choice.resources, ResourceAssignment{Resource: r, Flavor: flavor.Name, Amount: amount, Mode: m})
		choice.cells = append(choice.cells, cell{f, amount})
	}
	if choice.mode == Preempt && !as.blocked && !as.q.preemptionPossible(as.cq) {
		choice.mode, attempt.Mode, attempt.Code = NoFit, NoFit, WaitingForQuota
		choice.rank = rank{}
		attempt.Reasons = append(attempt.Reasons, Why{Kind: WhyNoPreemption})
	}
	return choice, attempt
}

// cellRank ranks one resource rated m; a short cell counts as preempting in the queue
// itself until resolve simulates it.
func (as *assigner) cellRank(m Mode, f frID, total resources.Amount) rank {
	switch m {
	case NoFit:
		return rank{}
	case Preempt:
		return rank{kind: kindPreempt}
	}
	level, _ := as.q.lowestFit(as.cq, f, total)
	return rank{kind: kindFit, level: level}
}

// hasQuotaEntry reports whether cq's group g lists resource r under flavor.
func (q *Quota) hasQuotaEntry(cq nodeID, g int, flavor string, r resources.Name) bool {
	for _, fq := range q.s.nodes[cq].cq.ResourceGroups[g].Flavors {
		if fq.Name != flavor {
			continue
		}
		for _, rq := range fq.Resources {
			if rq.Name == r {
				return true
			}
		}
	}
	return false
}

// rateCell rates amount of cell f for cq, on top of assumed (earlier pod sets of the
// same workload), and says why as a value.
func (q *Quota) rateCell(cq nodeID, f frID, amount, assumed resources.Amount) (Mode, ReasonCode, Why) {
	s := q.s
	i := s.idx(cq, f)
	fr := s.frs[f]
	total := resources.SatAdd(amount, assumed)
	why := Why{Resource: fr.Resource, Flavor: fr.Flavor, Amount: amount, Nominal: s.nominal[i],
		Free: max(0, s.nominal[i]-q.usage[i]-assumed)}
	if limit := q.potential(cq, f); total > limit {
		why.Kind, why.ClusterQueue, why.Limit = WhyExceedsMax, s.nodes[cq].name, limit
		return NoFit, ExceedsMaxQuota, why
	}
	avail := q.available(cq, f)
	if total <= avail {
		if resources.SatAdd(q.usage[i], total) > s.subtree[i] {
			why.Kind, why.Cohort = WhyBorrows, q.parentName(cq)
			why.Borrow = resources.SatAdd(q.usage[i], total) - max(s.subtree[i], q.usage[i])
			return Borrow, ReasonNone, why
		}
		why.Kind = WhyFits
		return Fit, ReasonNone, why
	}
	why.Kind = WhyShort
	q.whyNoBorrow(cq, f, &why)
	return Preempt, WaitingForQuota, why
}

// whyNoBorrow records why the cohort cannot supply the rest.
func (q *Quota) whyNoBorrow(cq nodeID, f frID, why *Why) {
	s := q.s
	parent := s.nodes[cq].parent
	if parent == noNode {
		why.NoBorrow = NotInCohort
		return
	}
	i := s.idx(cq, f)
	if bl := s.borrowLimit[i]; bl != noLimit {
		borrowed := max(0, q.usage[i]-s.subtree[i])
		if borrowed >= bl {
			why.NoBorrow, why.BorrowLimit = BorrowLimitReached, bl
			return
		}
	}
	// What the cohort can add beyond the queue's own unused nominal quota.
	why.NoBorrow, why.Cohort = CohortShort, s.nodes[parent].name
	why.Lendable = max(0, q.available(cq, f)-max(0, s.nominal[i]-q.usage[i]))
}

func (q *Quota) parentName(n nodeID) string {
	if p := q.s.nodes[n].parent; p != noNode {
		return q.s.nodes[p].name
	}
	return ""
}

// fillUsage totals the chosen cells and the borrowed part per cell.
func (as *assigner) fillUsage(a *Assignment) {
	s := as.q.s
	ids := make([]frID, 0, len(as.assumed))
	for f := range as.assumed {
		ids = append(ids, f)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, f := range ids {
		amt := as.assumed[f]
		if amt == 0 {
			continue
		}
		fr := s.frs[f]
		a.Usage = append(a.Usage, FlavorAmount{fr, amt})
		i := s.idx(as.cq, f)
		if b := resources.SatAdd(as.q.usage[i], amt) - max(s.subtree[i], as.q.usage[i]); b > 0 {
			a.Borrowed = append(a.Borrowed, FlavorAmount{fr, b})
		}
		if amt > as.q.available(as.cq, f) {
			a.NeedsPreemption = append(a.NeedsPreemption, fr)
		}
	}
	a.GPUMilli = as.gpuMilli(a)
}

// gpuMilli converts every pod set's GPU requests into the common unit, using the flavor
// assigned to its GPU resources.
func (as *assigner) gpuMilli(a *Assignment) resources.MilliGPU {
	var total resources.MilliGPU
	for i, psa := range a.PodSets {
		ps := as.ps[i]
		gpu := resources.Vector{}
		for k, v := range ps.Requests {
			if k.IsGPU() {
				gpu[k] = v
			}
		}
		if len(gpu) == 0 {
			continue
		}
		var flavor *api.ResourceFlavor
		for _, r := range psa.Resources {
			if r.Resource.IsGPU() {
				flavor = as.q.s.flavors[r.Flavor]
				break
			}
		}
		if m, err := as.q.s.acct(gpu, flavor); err == nil {
			total += m * resources.MilliGPU(ps.Count)
		}
	}
	return total
}

// pref is the ClusterQueue's flavorFungibility.preference (preferred).
func (as *assigner) pref() api.FungibilityPreference {
	return as.node.cq.FlavorFungibility.Preference
}
