package placement

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// RunningByEnd is the running workloads in the order reservation walks take them (by
// expected end, ties by ID), checked once. A cycle plans several reservations over one
// running list and admits gangs between them: it builds this once (NewRunningByEnd),
// adds each admitted gang at its place (Add), and every walk reuses the checks, the
// order and the grouping by end time instead of redoing them over every running gang.
type RunningByEnd struct {
	// list points into the slice given to Reset (and at copies of what Add was given):
	// a cycle reorders ten thousand running gangs, and copying the values each time was
	// a tenth of a fleet-size simulation (with the collector's write barrier on them).
	list []*Running
	// ends are list's expected ends, in the same order: grouping by end reads this
	// array, not ten thousand workloads scattered over the heap.
	ends []endTime
	ids  runningChecker
	// groups and unbounded are list grouped by end as of groupsNow (groupsFor);
	// grouped says they are current.
	groups    []endGroup
	unbounded []api.WorkloadID
	groupsNow time.Time
	grouped   bool
	// Reset's memory of the last list it was given, when valid: its keys by position
	// (in) and in walk order (sorted, at = position); added are the IDs Add filed in
	// ids since. spare is a buffer for the next keys.
	in, sorted, spare []endKey
	added             []api.WorkloadID
	valid             bool
	gone              []bool
	// edits is the driver's account the last ResetEdited took (running_edits.go).
	edits *RunningEdits
}

// NewRunningByEnd checks rs (IDs present and unique, no negative amounts) and orders
// it, without copying it: rs must not change while the result is used. The sort orders
// small keys, not the workloads themselves (ten thousand running gangs are a few
// megabytes to move around).
func NewRunningByEnd(rs []Running) (*RunningByEnd, error) {
	r := &RunningByEnd{}
	if err := r.Reset(rs); err != nil {
		return nil, err
	}
	return r, nil
}

// Reset makes r what NewRunningByEnd(rs) returns, reusing r's memory: a scheduler keeps
// one across cycles. r refers to rs's elements, so rs must not change while r is used. When rs differs from the list of the last Reset in a few places
// (a cycle's starts and finishes), only those are checked and merged into the order
// kept from last time; otherwise every workload is checked and sorted. On error r is
// empty.
func (r *RunningByEnd) Reset(rs []Running) error {
	for _, id := range r.added {
		delete(r.ids.ids, id)
	}
	r.added = r.added[:0]
	next := slices.Grow(r.spare[:0], len(rs))
	negative := false   // any negative amount: rebuild finds and reports it
	for i := range rs { // by index: a Running is a few hundred bytes to copy
		x := &rs[i]
		e := endTimeOf(x.ExpectedEnd)
		next = append(next, endKey{sec: e.sec, nsec: e.nsec, id: x.ID, at: int32(i)})
		negative = negative || x.GPUMilli < 0 || x.MinRuntime < 0 || x.GracePeriod < 0
	}
	if !r.valid || negative || !r.patch(next) {
		if err := r.rebuild(rs, next); err != nil {
			r.list, r.ends, r.valid, r.grouped = r.list[:0], r.ends[:0], false, false
			return err
		}
	}
	r.relist(rs)
	return nil
}

// relist points the walk order at rs's elements (r.sorted holds their keys).
func (r *RunningByEnd) relist(rs []Running) {
	r.list = slices.Grow(r.list[:0], len(rs))
	r.ends = slices.Grow(r.ends[:0], len(rs))
	for _, k := range r.sorted {
		r.list = append(r.list, &rs[k.at])
		r.ends = append(r.ends, endTime{sec: k.sec, nsec: k.nsec})
	}
	r.grouped = false
}

// rebuild checks every workload of rs and sorts next (its keys) into r.sorted.
func (r *RunningByEnd) rebuild(rs []Running, next []endKey) error {
	if r.ids.ids == nil {
		r.ids = newRunningChecker(len(rs))
	} else {
		clear(r.ids.ids)
	}
	for i, x := range rs {
		if err := r.ids.check(i, x); err != nil {
			return err
		}
	}
	r.sorted = append(r.sorted[:0], next...)
	slices.SortFunc(r.sorted, compareEndKeys)
	r.in, r.spare, r.valid = next, r.in, true
	return nil
}

// patch brings r from the last list to the new one (keys next) when few positions
// changed and no ID is empty or repeated (Reset checked the amounts); false leaves the
// work (and any error) to rebuild.
func (r *RunningByEnd) patch(next []endKey) bool {
	old := r.in
	var changed []int
	for i := range next {
		if i >= len(old) || old[i] != next[i] {
			changed = append(changed, i)
		}
	}
	removed := max(0, len(old)-len(next))
	if len(changed)+removed > len(next)/4+8 {
		return false
	}
	r.gone = append(r.gone[:0], make([]bool, len(old))...)
	for _, i := range changed {
		if i < len(old) {
			delete(r.ids.ids, old[i].id)
			r.gone[i] = true
		}
	}
	for i := len(next); i < len(old); i++ {
		delete(r.ids.ids, old[i].id)
		r.gone[i] = true
	}
	fresh := make([]endKey, 0, len(changed))
	for _, i := range changed {
		k := next[i]
		if k.id == "" || r.ids.ids[k.id] {
			return false
		}
		r.ids.ids[k.id] = true
		fresh = append(fresh, k)
	}
	r.replaceGone(fresh)
	r.in, r.spare = next, r.in
	return true
}

// replaceGone drops from the walk order the keys whose old position is marked gone and
// merges in fresh (sorted here).
func (r *RunningByEnd) replaceGone(fresh []endKey) {
	slices.SortFunc(fresh, compareEndKeys)
	kept := r.sorted[:0]
	for _, k := range r.sorted {
		if !r.gone[k.at] {
			kept = append(kept, k)
		}
	}
	r.sorted = mergeEndKeys(kept, fresh)
}

// mergeEndKeys merges two sorted key lists (a is kept and grown in place).
func mergeEndKeys(a, b []endKey) []endKey {
	if len(b) == 0 {
		return a
	}
	n := len(a)
	a = append(a, b...)
	i, j, k := n-1, len(b)-1, len(a)-1
	for j >= 0 {
		if i >= 0 && compareEndKeys(a[i], b[j]) > 0 {
			a[k] = a[i]
			i--
		} else {
			a[k] = b[j]
			j--
		}
		k--
	}
	return a
}

// endTime is an expected end as two integers, ordered as time.Time.Compare orders
// them (the zero time, an unknown end, first).
type endTime struct {
	sec  int64
	nsec int32
}

func endTimeOf(t time.Time) endTime { return endTime{sec: t.Unix(), nsec: int32(t.Nanosecond())} }

func (a endTime) after(b endTime) bool { return a.sec > b.sec || (a.sec == b.sec && a.nsec > b.nsec) }

// endKey is a running workload's place in the order of compareEnds: its expected end
// (a zero end, unknown, first, as time.Time.Compare has it) and ID; at is its index.
type endKey struct {
	sec  int64
	nsec int32
	at   int32
	id   api.WorkloadID
}

func compareEndKeys(a, b endKey) int {
	switch {
	case a.sec != b.sec:
		return cmp.Compare(a.sec, b.sec)
	case a.nsec != b.nsec:
		return cmp.Compare(a.nsec, b.nsec)
	}
	return strings.Compare(string(a.id), string(b.id))
}

// Add puts x at its place; an invalid or duplicate x is an error and changes nothing.
func (r *RunningByEnd) Add(x Running) error {
	if err := r.ids.check(len(r.list), x); err != nil {
		return err
	}
	r.added = append(r.added, x.ID)
	i := sort.Search(len(r.list), func(k int) bool { return EndsBefore(x, *r.list[k]) })
	r.list = slices.Insert(r.list, i, &x)
	r.ends = slices.Insert(r.ends, i, endTimeOf(x.ExpectedEnd))
	r.grouped = false // the groups share list's backing array
	return nil
}

// Len is the number of running workloads.
func (r *RunningByEnd) Len() int { return len(r.list) }

// List is the workloads in walk order (read-only).
func (r *RunningByEnd) List() []*Running { return r.list }

// runningChecker checks running workloads one by one, as every running list placement
// takes must be: IDs present and unique, no negative amounts.
type runningChecker struct{ ids map[api.WorkloadID]bool }

func newRunningChecker(n int) runningChecker {
	return runningChecker{ids: make(map[api.WorkloadID]bool, n)}
}

// check validates x, the i-th running workload given, and remembers its ID.
func (c runningChecker) check(i int, x Running) error {
	if err := c.invalid(i, x); err != nil {
		return err
	}
	c.ids[x.ID] = true
	return nil
}

func (c runningChecker) invalid(i int, x Running) error {
	switch {
	case x.ID == "":
		return fmt.Errorf("running workload #%d: id: must not be empty", i)
	case c.ids[x.ID]:
		return fmt.Errorf("running workload %s: id: listed twice", x.ID)
	case x.GPUMilli < 0:
		return fmt.Errorf("running workload %s: gpuMilli: %d is negative", x.ID, x.GPUMilli)
	case x.MinRuntime < 0:
		return fmt.Errorf("running workload %s: minRuntime: %s is negative", x.ID, x.MinRuntime)
	case x.GracePeriod < 0:
		return fmt.Errorf("running workload %s: gracePeriod: %s is negative", x.ID, x.GracePeriod)
	}
	return nil
}

// groupsFor is the list grouped by end time as seen at now (kept until Add or another
// now).
func (r *RunningByEnd) groupsFor(now time.Time) ([]endGroup, []api.WorkloadID) {
	if !r.grouped || !r.groupsNow.Equal(now) {
		r.groups, r.unbounded = groupSorted(r.list, r.ends, now, r.groups) // the last cycle's groups are done with
		r.groupsNow, r.grouped = now, true
	}
	return r.groups, r.unbounded
}
