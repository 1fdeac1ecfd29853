package placement

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"pgregory.net/rapid"
)

// Property: a chooser that reads verdicts from the memo of earlier choosers places pod
// after pod as the full scan does. A few requests are reused over rounds in which pods
// are placed (by the memo chooser on one overlay, by the reference on another), some
// pods are freed again, and sometimes both overlays are committed as new snapshots, so
// the memo meets nodes that changed since it read them, in the overlay and in the base.
// Verdicts must actually have been reused, or the property says nothing.
func TestVerdictMemoMatchesFullScan(t *testing.T) {
	shapes := NewShapeStats()
	for _, s := range equivShapes {
		shapes.Observe(gt.Req(s[0], s[1]))
	}
	scorerSets := [][]WeightedScorer{DefaultScorers(), {{Spread{}, 1}}, {{Fragmentation{Shapes: shapes}, 1}}, {{nameScorer{}, 1}, {Binpack{}, 1}}}
	reused, placed := 0, 0
	rapid.Check(t, func(rt *rapid.T) {
		s, err := cluster.NewSnapshot(equivNodes(rt), nil)
		if err != nil {
			rt.Fatal(err)
		}
		if s.NumNodes() == 0 {
			return
		}
		reqs := []*PodRequest{equivRequest(rt), equivRequest(rt), equivRequest(rt)}
		cache := &FitCache{}
		ovNew, ovRef := s.Overlay(), s.Overlay()
		var pods []cluster.PodRef
		for round := range rapid.IntRange(1, 12).Draw(rt, "rounds") {
			p := rapid.SampledFrom(reqs).Draw(rt, "request")
			scorers := rapid.SampledFrom(scorerSets).Draw(rt, "scorers")
			reused += memoHits(cache, ovNew, p, scorers)
			seed := rapid.Int64().Draw(rt, "seed")
			c := newChooser(ovNew, nil, p, scorers, rand.New(rand.NewSource(seed)), cache)
			r := newRefChooser(ovRef, nil, p, scorers, rand.New(rand.NewSource(seed)))
			for k := range rapid.IntRange(1, 5).Draw(rt, "pods") {
				ref := cluster.PodRef{Workload: api.WorkloadID(fmt.Sprintf("ns/w%d", round)), PodSet: "main", Index: k}
				got, want := placeNew(c, ref), r.place(ref)
				if got != want {
					rt.Fatalf("round %d pod %d (%v): placed on %q, full scan %q", round, k, p.Requests, got, want)
				}
				if got != "" {
					placed++
					pods = append(pods, ref)
				}
			}
			cache.giveBack(c)
			for _, ref := range pods {
				if rapid.IntRange(0, 3).Draw(rt, "free") == 0 {
					_ = ovNew.Forget(ref)
					_ = ovRef.Forget(ref)
				}
			}
			if rapid.IntRange(0, 2).Draw(rt, "commit") == 0 {
				ovNew, ovRef = ovNew.Snapshot().Overlay(), ovRef.Snapshot().Overlay()
			}
		}
	})
	if reused == 0 || placed == 0 {
		t.Fatalf("verdicts reused %d, pods placed %d: both must happen", reused, placed)
	}
}

// memoHits counts the nodes whose verdict for p under scorers the cache holds for their
// current state.
func memoHits(c *FitCache, ov *cluster.Overlay, p *PodRequest, scorers []WeightedScorer) int {
	n := 0
	for _, m := range c.verdicts[p.shapeKey()] {
		if fmt.Sprint(m.scorers) != fmt.Sprint(scorers) {
			continue
		}
		for i := range min(len(m.at), ov.NumNodes()) {
			if m.lin == ov.Lineage() && m.at[i].version == ov.Version(i) {
				n++
			}
		}
	}
	return n
}
