package placement

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
)

// endGroup is the running workloads that end at one instant (end; members is never
// empty).
type endGroup struct {
	end     endTime
	members []*Running
}

// at is the group's end as a time (an overdue group's members are copies ending now).
func (g endGroup) at() time.Time { return g.members[0].ExpectedEnd }

// PlanReservation computes when and where a gang that does not fit now could start: it
// walks the expected end times of the running workloads in order, freeing their pods
// on ov, until the gang fits (earlier reservations in req.Held hold their capacity from
// their start on). The first end time at which it fits is the ETA. The overlay is left
// as it was.
func PlanReservation(ov *cluster.Overlay, fit GangFit, req ReservationRequest) (ReservationResult, error) {
	if ov == nil || fit == nil {
		return ReservationResult{}, fmt.Errorf("reservation for %s: overlay and fit must not be nil", req.Workload)
	}
	if req.Running == nil {
		return ReservationResult{}, fmt.Errorf("reservation for %s: running: must not be nil (NewRunningByEnd)", req.Workload)
	}
	res := ReservationResult{Workload: req.Workload}
	p := &overlayProbe{ov: ov, fit: fit}
	base := p.mark()
	defer p.undo(base)
	// The caller has usually just failed to place the gang here: the cheap necessary
	// condition spares most of the full fit.
	if !req.NoFitNow && (req.MayFit == nil || req.MayFit(ov)) && p.fits() {
		res.Outcome, res.Reason = ReserveFitsNow, "the gang fits now"
		return res, nil
	}
	groups, unbounded := req.Running.groupsFor(req.Now)
	res.Unbounded = unbounded
	held := heldBefore(req.Held, req.Workload)
	start := enoughFrom(groups, req)
	w := &walk{p: p, groups: groups, held: held, marks: []int{base}, mayFit: req.MayFit}
	// Last cycle's reservation stands unless a fresh one starts no later: search the end
	// groups up to its start first, and only if none fits and it is no longer valid,
	// the rest (a kept reservation's ETA never slips behind backfilled work).
	end := len(groups)
	var prev *Reservation
	if pr := req.Previous; pr != nil && pr.Workload == req.Workload {
		prev = pr
		prevStart := endTimeOf(prev.Start)
		end = sort.Search(len(groups), func(g int) bool { return groups[g].end.after(prevStart) })
	}
	g, ok := firstFit(w, start, end)
	if !ok && prev != nil {
		if stillValid(p, base, *prev, groups, held) {
			return keptPrevious(res, *prev), nil
		}
		w.marks = w.marks[:1] // stillValid went back to the base
		g, ok = firstFit(w, max(start, end), len(groups))
	}
	var fresh *Reservation
	if ok {
		fresh = &Reservation{Workload: req.Workload, Queue: req.Queue, Start: groups[g].at(), Pods: p.lastPods, Waits: waitsOf(groups[:g+1])}
	}
	if fresh == nil {
		res.Outcome = ReserveNoETA
		res.Reason = fmt.Sprintf("does not fit even after all %d running workloads with a known end finish; %d have no runtime bound",
			countMembers(groups), len(unbounded))
		return res, nil
	}
	res.Outcome, res.Reservation = Reserved, fresh
	last := fresh.Waits[len(fresh.Waits)-1]
	res.Reason = fmt.Sprintf("fits at %s, when %s ends (after %d running workloads end), on %v",
		fresh.Start.UTC().Format(time.RFC3339), last, len(fresh.Waits), fresh.Nodes())
	return res, nil
}

// keptPrevious is the result that keeps last cycle's reservation.
func keptPrevious(res ReservationResult, prev Reservation) ReservationResult {
	kept := prev
	res.Outcome, res.Reservation, res.KeptPrevious = Reserved, &kept, true
	res.Reason = fmt.Sprintf("keeps its reservation from the last cycle: starts at %s on %v", kept.Start.UTC().Format(time.RFC3339), kept.Nodes())
	return res
}

// firstFit finds the first end group in [start, end) after which the gang fits (no
// group before start frees enough GPUs). Without held reservations freeing capacity
// only helps, so the first fit is found by galloping up from start and then bisecting:
// a few probes that release only the groups up to about twice the answer when the gang
// fits soon after the GPU count allows it, the common case (probing the last group
// first would release every running workload each time). Held reservations that begin
// along the way break that order, so with any held the groups are walked one by one:
// the ETA is then exactly the first end time that fits.
func firstFit(w *walk, start, end int) (int, bool) {
	if start >= end {
		return 0, false
	}
	if len(w.held) > 0 {
		return w.linearFit(start, end)
	}
	lo, hi := start-1, -1 // lo is before the first fit; fitsAt(hi) is true once hi >= 0
	for step := 1; hi < 0; step *= 2 {
		probe := min(lo+step, end-1)
		if w.fitsAt(probe) {
			hi = probe
			break
		}
		if probe == end-1 {
			return 0, false
		}
		lo = probe
	}
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return w.fitsAt(lo + 1 + i) }), true
}

// walk probes end groups on one overlay without starting over each time: marks[k] is
// the overlay mark once groups[0..k-1] are released (marks[0] the base), so a probe
// releases only the groups past the furthest one released and undoes only back to the
// nearest mark (probes move both ways while bisecting).
type walk struct {
	p      *overlayProbe
	groups []endGroup
	held   ReservationSet
	marks  []int
	mayFit func(*cluster.Overlay) bool // ReservationRequest.MayFit
}

// fits asks the full fit where the cheap condition does not rule it out.
func (w *walk) fits() bool {
	return (w.mayFit == nil || w.mayFit(w.p.ov)) && w.p.fits()
}

// fitsAt frees groups[0..g], holds the reservations that start by then, and asks
// whether the gang fits.
func (w *walk) fitsAt(g int) bool {
	if g+1 < len(w.marks) {
		w.marks = w.marks[:g+2]
	}
	w.p.undo(w.marks[len(w.marks)-1])
	for k := len(w.marks) - 1; k <= g; k++ {
		for i := range w.groups[k].members {
			// A workload whose pods are gone already frees nothing more; keep walking.
			_ = w.p.release(w.groups[k].members[i])
		}
		w.marks = append(w.marks, w.p.mark())
	}
	holdStarted(w.p.ov, w.held, w.groups[g].end)
	return w.fits()
}

// linearFit walks the groups one by one from start under held reservations. The
// overlay keeps what the last step released and held: a step releases its own group,
// then holds the reserved pods that have started by then (retrying the ones whose
// GPUs were still busy), so it costs its group, not every group before it. At each
// step the overlay holds what fitsAt would build from the base: the groups up to it
// released, and the started reserved pods whose devices are free of running pods.
func (w *walk) linearFit(start, end int) (int, bool) {
	w.p.undo(w.marks[0])
	w.marks = w.marks[:1] // the marks of earlier probes are gone with the undo
	held := make([][]bool, len(w.held))
	for g := 0; g < end; g++ {
		for i := range w.groups[g].members {
			_ = w.p.release(w.groups[g].members[i])
		}
		if g < start {
			continue
		}
		holdMore(w.p.ov, w.held, held, w.groups[g].end)
		if w.fits() {
			return g, true
		}
	}
	return 0, false
}

// holdMore assumes the reserved pods started by t that are not held yet (done[i][k]
// for pod k of reservation i), best effort as holdStarted.
func holdMore(ov *cluster.Overlay, rs ReservationSet, done [][]bool, t endTime) {
	for i, r := range rs {
		if endTimeOf(r.Start).after(t) {
			continue
		}
		if done[i] == nil {
			done[i] = make([]bool, len(r.Pods))
		}
		for k, bp := range r.Pods {
			if !done[i][k] && ov.Assume(bp.Ref, bp.Node, bp.Requests, bp.Devices) == nil {
				done[i][k] = true
			}
		}
	}
}

// enoughFrom is the first end group after which enough GPUs could be free for the gang
// (free now plus what the groups up to it release); 0 when the need is unknown. Both
// bounds only ever overstate what is free, so no group before it can fit the gang.
func enoughFrom(groups []endGroup, req ReservationRequest) int {
	if req.NeedGPUMilli <= 0 {
		return 0
	}
	free := req.FreeGPUMilli
	for g, grp := range groups {
		for _, m := range grp.members {
			free += m.GPUMilli
		}
		if free >= req.NeedGPUMilli {
			return g
		}
	}
	return len(groups)
}

// holdStarted assumes the pods of reservations starting at or before t, best effort: a
// pod whose capacity is still busy in this what-if simply is not held.
func holdStarted(ov *cluster.Overlay, held ReservationSet, t endTime) {
	for _, r := range held {
		if endTimeOf(r.Start).after(t) {
			continue
		}
		for _, bp := range r.Pods {
			_ = ov.Assume(bp.Ref, bp.Node, bp.Requests, bp.Devices)
		}
	}
}

// stillValid reports whether prev's pods can all be bound at prev.Start.
func stillValid(p *overlayProbe, base int, prev Reservation, groups []endGroup, held ReservationSet) bool {
	p.undo(base)
	prevStart := endTimeOf(prev.Start)
	for _, grp := range groups {
		if grp.end.after(prevStart) {
			break
		}
		for i := range grp.members {
			_ = p.release(grp.members[i])
		}
	}
	holdStarted(p.ov, held, prevStart)
	for _, bp := range prev.Pods {
		if err := p.ov.Assume(bp.Ref, bp.Node, bp.Requests, bp.Devices); err != nil {
			return false
		}
	}
	return true
}

// groupSorted groups a list sorted by EndsBefore: workloads without an end first (in
// ID order), then one group per end time; an end in the past counts as now (the
// workload is overdue and about to be stopped). ends are rs's expected ends. The groups
// share rs's backing array except the overdue one; groups' backing array is reused for
// the result.
func groupSorted(rs []*Running, ends []endTime, now time.Time, groups []endGroup) ([]endGroup, []api.WorkloadID) {
	zero, at := endTimeOf(time.Time{}), endTimeOf(now)
	b := 0 // unbounded ends are zero: they sort first, in ID order
	for b < len(rs) && ends[b] == zero {
		b++
	}
	unbounded := make([]api.WorkloadID, b)
	for i := range unbounded {
		unbounded[i] = rs[i].ID
	}
	groups = groups[:0]
	o := b
	for o < len(rs) && !ends[o].after(at) {
		o++
	}
	if o > b { // overdue or ending now: one group at now, in ID order
		due := make([]*Running, o-b)
		for i, x := range rs[b:o] {
			c := *x
			c.ExpectedEnd = now
			due[i] = &c
		}
		slices.SortFunc(due, func(x, y *Running) int { return strings.Compare(string(x.ID), string(y.ID)) })
		groups = append(groups, endGroup{end: at, members: due})
	}
	for i := o; i < len(rs); {
		j := i + 1
		for j < len(rs) && ends[j] == ends[i] {
			j++
		}
		groups = append(groups, endGroup{end: ends[i], members: rs[i:j:j]})
		i = j
	}
	return groups, unbounded
}

// compareEnds is EndsBefore as a comparison.
func compareEnds(a, b Running) int {
	if c := a.ExpectedEnd.Compare(b.ExpectedEnd); c != 0 {
		return c
	}
	return strings.Compare(string(a.ID), string(b.ID))
}

// EndsBefore is the order reservation walks take running workloads in: by expected end,
// ties by ID. A caller that keeps its running list in this order (SortByEnd) saves a
// sort per reservation.
func EndsBefore(a, b Running) bool {
	if !a.ExpectedEnd.Equal(b.ExpectedEnd) {
		return a.ExpectedEnd.Before(b.ExpectedEnd)
	}
	return a.ID < b.ID
}

// heldBefore drops w's own reservation from held.
func heldBefore(held ReservationSet, w api.WorkloadID) ReservationSet {
	out := make(ReservationSet, 0, len(held))
	for _, r := range held {
		if r.Workload != w {
			out = append(out, r)
		}
	}
	return out
}

func waitsOf(groups []endGroup) []api.WorkloadID {
	var out []api.WorkloadID
	for _, g := range groups {
		for _, m := range g.members {
			out = append(out, m.ID)
		}
	}
	return out
}

func countMembers(groups []endGroup) int {
	n := 0
	for _, g := range groups {
		n += len(g.members)
	}
	return n
}
