package admission

import (
	"fmt"
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/api"
)

// Partial admission, as Kueue does it: a workload whose pod sets state a minimum count
// (api.PodSet.MinCount, e.g. a Job's kueue.x-k8s.io/job-min-parallelism) and that does
// not fit at full count, neither directly nor by preempting, may be admitted with fewer
// pods. Every pod set with a minimum is reduced by the same fraction of its range
// (Count - MinCount), and the largest counts that fit are found by binary search. The
// admitted pods are then the whole gang of that admission (Reduced): Kueue starts all of
// them, and so does Gantry.

// Reducible reports whether wl may be admitted with fewer pods than it asks for: some
// pod set has a minimum count below its count.
func Reducible(wl *api.Workload) bool {
	if wl == nil {
		return false
	}
	for _, ps := range wl.PodSets {
		if ps.MinCount > 0 && ps.MinCount < ps.Count {
			return true
		}
	}
	return false
}

// Reduced returns a copy of wl with the given pod counts (one per pod set). Every pod
// of a reduced copy belongs to its gang: MinCount and MinMember are cleared, since the
// admitted count is the minimum the admission guarantees. The pod sets' other fields are
// shared with wl (read-only).
func Reduced(wl *api.Workload, counts []int32) *api.Workload {
	out := *wl
	out.PodSets = make([]api.PodSet, len(wl.PodSets))
	copy(out.PodSets, wl.PodSets)
	out.MinMember = 0
	for i := range out.PodSets {
		if i < len(counts) {
			out.PodSets[i].Count = counts[i]
		}
		out.PodSets[i].MinCount = 0
	}
	return &out
}

// reducer walks the counts of a workload's pod sets from full (search index 0) down to
// every minimum (index total): at index i each reducible set gives up
// delta*i/total of its range, so all of them shrink in proportion.
type reducer struct {
	full, deltas []int32
	total        int32
	// last is the deepest index searched: total, or less where a workload-wide gang
	// minimum (MinMember, a Volcano PodGroup's minMember) would be undercut, since the
	// reduced copy's pods are its whole gang.
	last int32
}

func newReducer(wl *api.Workload) reducer {
	r := reducer{full: make([]int32, len(wl.PodSets)), deltas: make([]int32, len(wl.PodSets))}
	for i, ps := range wl.PodSets {
		r.full[i] = ps.Count
		if ps.MinCount > 0 && ps.MinCount < ps.Count {
			r.deltas[i] = ps.Count - ps.MinCount
			r.total += r.deltas[i]
		}
	}
	r.last = r.total
	for r.last > 0 && sum(r.countsAt(r.last)) < wl.MinMember {
		r.last--
	}
	return r
}

func sum(counts []int32) int32 {
	var n int32
	for _, c := range counts {
		n += c
	}
	return n
}

// countsAt are the pod counts at search index i (0 <= i <= total).
func (r reducer) countsAt(i int32) []int32 {
	out := make([]int32, len(r.full))
	for k, d := range r.deltas {
		out[k] = r.full[k] - int32(int64(d)*int64(i)/int64(r.total))
	}
	return out
}

// PartialFit is the outcome of one try of a reduced workload: its assignment and
// whether it can be admitted that way (fits, or needs preemption and victims exist).
type PartialFit struct {
	Assignment Assignment
	OK         bool
}

// SearchReduced finds the largest counts at which try accepts the reduced copy of wl,
// by binary search from full counts down to every pod set's minimum (Kueue's pod set
// reducer: it assumes that fewer pods never fit worse). It returns the copy and the
// accepted try's assignment, marked with the requested counts (PodSetAssignment.
// FullCount); false when wl is not reducible or no counts are accepted.
func SearchReduced(wl *api.Workload, try func(*api.Workload) PartialFit) (*api.Workload, Assignment, bool) {
	if !Reducible(wl) {
		return nil, Assignment{}, false
	}
	r := newReducer(wl)
	var (
		best    *api.Workload
		bestFit Assignment
		found   bool
	)
	sort.Search(int(r.last)+1, func(i int) bool {
		w := Reduced(wl, r.countsAt(int32(i)))
		f := try(w)
		// sort.Search probes ever smaller indexes after a success, so the last
		// success is the largest accepted counts.
		if f.OK {
			best, bestFit, found = w, f.Assignment, true
		}
		return f.OK
	})
	if !found {
		return nil, Assignment{}, false
	}
	markFull(&bestFit, wl)
	return best, bestFit, true
}

// markFull records in a the counts wl asked for, on its own copy of the pod sets (a
// caller's memo may share the array).
func markFull(a *Assignment, wl *api.Workload) {
	a.PodSets = slices.Clone(a.PodSets)
	for i := range a.PodSets {
		if i < len(wl.PodSets) {
			a.PodSets[i].FullCount = wl.PodSets[i].Count
		}
	}
}

// Partial reports whether the assignment admits fewer pods than the workload asked for
// (partial admission).
func (a Assignment) Partial() bool {
	for _, ps := range a.PodSets {
		if ps.FullCount > ps.Count {
			return true
		}
	}
	return false
}

// PartialPods returns the pods admitted and the pods asked for, over all pod sets of a
// partial admission (both 0 when the assignment is not partial).
func (a Assignment) PartialPods() (admitted, requested int32) {
	if !a.Partial() {
		return 0, 0
	}
	for _, ps := range a.PodSets {
		admitted += ps.Count
		requested += max(ps.FullCount, ps.Count)
	}
	return admitted, requested
}

// PartialText is the line that says the assignment admits fewer pods than asked
// ("admitted 9 of 20 pods (partial admission)"); "" when it admits them all.
func (a Assignment) PartialText() string {
	admitted, asked := a.PartialPods()
	if asked == 0 {
		return ""
	}
	return fmt.Sprintf("admitted %d of %d pods (partial admission)", admitted, asked)
}

// leastPods is the fewest pods of ps any admission may take: its minimum when partial
// admission may reduce it, else its count.
func leastPods(ps *api.PodSet) int32 { return ps.GangCount() }
