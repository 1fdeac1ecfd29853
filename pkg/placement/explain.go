package placement

import (
	"sort"

	"github.com/gantry-sched/gantry/pkg/cluster"
)

// diagnose explains why the set's next pod fits none of nodes: each node counted under
// its first rejection, and the nearest miss (fewest rejections, then name).
func (p *setPlacer) diagnose(nodes []int) *Diagnosis {
	d := &Diagnosis{Workload: p.w.ID(), PodSet: p.ps.Name, Pod: p.next, TotalNodes: p.ov.NumNodes()}
	if p.quiet {
		return d
	}
	var t tally
	in := make(map[int]bool, len(nodes))
	for _, i := range nodes {
		in[i] = true
	}
	var near *NearMiss
	for i := 0; i < p.ov.NumNodes(); i++ {
		if !in[i] {
			t.add(Rejection{Reason: ReasonTopology, Subject: "outside the candidate domain"})
			continue
		}
		rej := CheckPodOnNodeAt(p.ov, p.req, i)
		if len(rej) == 0 {
			d.FitNodes++
			continue
		}
		t.add(rej[0])
		if near == nil || len(rej) < len(near.Rejections) {
			near = &NearMiss{Node: p.ov.Node(i).Name, Rejections: rej}
		}
	}
	d.Counts, d.NearMiss = t.sorted(), near
	return d
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
	for _, d := range domains {
		if r := domainEstimate(ov, d, p); r >= int64(n) {
			rs = append(rs, domainRoom{d, r})
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

// domainEstimate sums the estimated room of the domain's statically feasible nodes.
func domainEstimate(ov *cluster.Overlay, d cluster.Domain, p *PodRequest) int64 {
	var sum int64
	var scratch [2]Rejection
	for _, i := range d.Nodes {
		if len(staticCheck(ov.Node(i), p, false, scratch[:0])) == 0 {
			sum += estimate(ov, i, p)
		}
	}
	return sum
}

// bestRoom names the domain with the most estimated room.
func bestRoom(ov *cluster.Overlay, domains []cluster.Domain, p *PodRequest) (string, int64) {
	best, room := "", int64(-1)
	for _, d := range domains {
		if r := domainEstimate(ov, d, p); r > room {
			best, room = d.ID, r
		}
	}
	return best, room
}
