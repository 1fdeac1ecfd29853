package placement

import (
	"slices"
	"sort"

	"github.com/gantry-sched/gantry/pkg/cluster"
)

// diagnose explains why the set's next pod fits none of nodes (nil: every node): each
// node counted under its first rejection, and the nearest miss (fewest rejections, then
// name). It checks every node of the cluster, the ones the free index let placement skip
// included, so the counts are those of a full scan; it runs only once placement failed.
func (p *setPlacer) diagnose(nodes []int) *Diagnosis {
	d := &Diagnosis{Workload: p.w.ID(), PodSet: p.ps.Name, Pod: p.next, TotalNodes: p.ov.NumNodes()}
	if p.quiet {
		return d
	}
	if nodes == nil && p.fits != nil {
		p.diagnoseAll(d, p.fits.diagMemoFor(p.ov, p.req))
		return d
	}
	var t tally
	in := make(map[int]bool, len(nodes))
	for _, i := range nodes {
		in[i] = true
	}
	var near *NearMiss
	fits := p.fitsFor()
	static := staticSet(p.ov, p.req)
	var scratch []Rejection // reused node to node: only the nearest miss keeps a copy
	for i := 0; i < p.ov.NumNodes(); i++ {
		if nodes != nil && !in[i] {
			t.add(Rejection{Reason: ReasonTopology, Subject: "outside the candidate domain"})
			continue
		}
		rej := p.rejectionsAt(i, static, fits, scratch[:0])
		scratch = rej
		if len(rej) == 0 {
			d.FitNodes++
			continue
		}
		t.add(rej[0])
		if near == nil || len(rej) < len(near.Rejections) {
			near = &NearMiss{Node: p.ov.Node(i).Name, Rejections: slices.Clone(rej)}
		}
	}
	d.Counts, d.NearMiss = t.sorted(), near
	return d
}

// fitsFor is the fit cache's entries for the request's GPU shape (nil without a cache
// or a GPU request).
func (p *setPlacer) fitsFor() []fitEntry {
	if p.fits != nil && !p.req.GPU.IsZero() {
		return p.fits.shape(p.ov, fitKeyOf(p.req.GPU))
	}
	return nil
}

// rejectionsAt appends every reason the set's next pod does not fit node i to rej (the
// nodes of the static set pass the static checks: only the others are asked them).
func (p *setPlacer) rejectionsAt(i int, static *cluster.NodeSet, fits []fitEntry, rej []Rejection) []Rejection {
	if !static.Has(i) {
		rej = staticCheck(p.ov.Node(i), p.req, true, rej)
	}
	if fits != nil {
		_, rej = resourceCheckWith(p.ov, i, p.req, true, rej, &fits[i])
	} else {
		_, rej = resourceCheck(p.ov, i, p.req, true, rej)
	}
	return rej
}

// CheckPodOnNodeAt is CheckPodOnNode by node index.
func CheckPodOnNodeAt(ov *cluster.Overlay, p *PodRequest, i int) []Rejection {
	out := staticCheck(ov.Node(i), p, true, nil)
	_, out = resourceCheck(ov, i, p, true, out)
	return out
}

// domainRoom is a domain with its estimated room for pods.
type domainRoom struct {
	cluster.Domain
	room int64
}

// rankDomains keeps the domains with estimated room for n pods, smallest room first (best
// fit), ties by ID.
func rankDomains(ov *cluster.Overlay, domains []cluster.Domain, p *PodRequest, n int) []cluster.Domain {
	var rs []domainRoom
	r := newRoomEstimator(ov, p)
	for _, d := range domains {
		if room := r.domain(d); room >= int64(n) {
			rs = append(rs, domainRoom{d, room})
		}
	}
	sort.SliceStable(rs, func(i, j int) bool {
		if rs[i].room != rs[j].room {
			return rs[i].room < rs[j].room
		}
		return rs[i].ID < rs[j].ID
	})
	out := make([]cluster.Domain, len(rs))
	for k, r := range rs {
		out[k] = r.Domain
	}
	return out
}

// roomEstimator sums estimates over domains. Only candidates (of any GPU model, see
// candidates) are estimated: every other node is statically infeasible or has too little
// of the pod's GPU resource free, so its estimate is 0 and the sums are the same. Twin
// nodes have the same estimate, so each class of twins is estimated once.
type roomEstimator struct {
	ov    *cluster.Overlay
	p     *PodRequest
	cand  cluster.NodeSet
	twins map[int32]int64
}

func newRoomEstimator(ov *cluster.Overlay, p *PodRequest) *roomEstimator {
	r := &roomEstimator{ov: ov, p: p, twins: map[int32]int64{}}
	candidates(ov, p, false, &r.cand)
	return r
}

// domain sums the estimated room of the domain's statically feasible nodes.
func (r *roomEstimator) domain(d cluster.Domain) int64 {
	var sum int64
	for _, i := range d.Nodes {
		if r.cand.Has(i) {
			sum += r.node(i)
		}
	}
	return sum
}

func (r *roomEstimator) node(i int) int64 {
	class, twin := r.ov.TwinClass(i)
	if !twin {
		return estimate(r.ov, i, r.p)
	}
	e, seen := r.twins[class]
	if !seen {
		e = estimate(r.ov, i, r.p)
		r.twins[class] = e
	}
	return e
}

// bestRoom names the domain with the most estimated room.
func bestRoom(ov *cluster.Overlay, domains []cluster.Domain, p *PodRequest) (string, int64) {
	best, room := "", int64(-1)
	r := newRoomEstimator(ov, p)
	for _, d := range domains {
		if e := r.domain(d); e > room {
			best, room = d.ID, e
		}
	}
	return best, room
}
