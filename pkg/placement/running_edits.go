package placement

import "slices"

// RunningEdits is a driver's account of the positions of its running list it wrote
// since a RunningByEnd last took the list (ResetEdited): a cycle's few starts and
// finishes, so that the walk order is brought up to date from them instead of reading
// every running workload again (ten thousand, every cycle, were 6 % of a fleet-size
// simulation). The driver must Touch every position it writes (appends and removals
// included; positions past the new length need not be); Everything says it cannot
// tell. The zero value is an empty account.
type RunningEdits struct {
	at  []int32
	all bool
}

// maxEdits bounds an account no one takes (cycles without reservations): past it, it
// says Everything.
const maxEdits = 1 << 16

// Touch records that position i was written.
func (e *RunningEdits) Touch(i int) {
	switch {
	case e.all:
	case len(e.at) >= maxEdits:
		e.Everything()
	default:
		e.at = append(e.at, int32(i))
	}
}

// Everything records that any position may have changed.
func (e *RunningEdits) Everything() { e.all, e.at = true, e.at[:0] }

// clear starts a new account once a RunningByEnd has taken the list.
func (e *RunningEdits) clear() { e.all, e.at = false, e.at[:0] }

// ResetEdited is Reset(rs) for a list that differs from the one of this RunningByEnd's
// last Reset or ResetEdited only where ed says; ed is then emptied. Without a usable
// account (nil, Everything, many edits, another account than last time, a list not
// taken before) it is Reset. One account is for one RunningByEnd: another taking it
// would empty it of what this one has not seen.
func (r *RunningByEnd) ResetEdited(rs []Running, ed *RunningEdits) error {
	if ed == nil {
		return r.Reset(rs)
	}
	usable := r.valid && !ed.all && ed == r.edits && len(ed.at) <= len(rs)/4+8
	r.edits = ed
	defer ed.clear()
	if !usable || !r.patchAt(rs, ed.at) {
		r.valid = false // the full path checks and sorts everything
		return r.Reset(rs)
	}
	r.relist(rs)
	return nil
}

// patchAt brings r from the last list (keys by position in r.in) to rs, which differs
// at the positions in at and in its length; false leaves the work to a full Reset.
func (r *RunningByEnd) patchAt(rs []Running, at []int32) bool {
	for _, id := range r.added {
		delete(r.ids.ids, id)
	}
	r.added = r.added[:0]
	old, n := r.in, len(rs)
	size := max(len(old), n)
	r.gone = append(r.gone[:0], make([]bool, size)...) // per old position: left; reused below
	var changed []int32
	mark := func(p int32) {
		if p < int32(len(old)) && !r.gone[p] {
			r.gone[p] = true
			delete(r.ids.ids, old[p].id)
		}
		if p < int32(n) {
			changed = append(changed, p)
		}
	}
	for _, p := range at {
		if p >= 0 && int(p) < size {
			mark(p)
		}
	}
	for p := n; p < len(old); p++ { // removed from the end
		mark(int32(p))
	}
	for p := len(old); p < n; p++ { // appended
		changed = append(changed, int32(p))
	}
	slices.Sort(changed)
	changed = slices.Compact(changed)
	fresh := make([]endKey, 0, len(changed))
	for _, p := range changed {
		x := &rs[p]
		if x.ID == "" || r.ids.ids[x.ID] || x.GPUMilli < 0 || x.MinRuntime < 0 || x.GracePeriod < 0 {
			return false
		}
		r.ids.ids[x.ID] = true
		e := endTimeOf(x.ExpectedEnd)
		fresh = append(fresh, endKey{sec: e.sec, nsec: e.nsec, id: x.ID, at: p})
	}
	r.replaceGone(fresh)
	if cap(r.in) < n {
		r.in = slices.Grow(r.in, n-len(r.in))
	}
	r.in = r.in[:n]
	for _, k := range fresh {
		r.in[k.at] = k
	}
	return true
}
