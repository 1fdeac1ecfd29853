package placement

import (
	"fmt"
	"math/rand"
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	corev1 "k8s.io/api/core/v1"
	"pgregory.net/rapid"
)

// The code below is placement done plainly, before the free index and twins: every node
// scanned, static checks per node, the tied nodes listed and one Intn among them (a scan
// policy's refChoose keeps its one Intn per tie). The property tests run it beside the
// real code on equal overlays and seeds and want the same picks.

type refSlot struct {
	node      int
	ok        bool
	score     int64
	assign    devices.Assignment
	predicted bool
}

type refChooser struct {
	c     *chooser // for predictWhole and candidate, which did not change
	slots []refSlot
}

func newRefChooser(ov *cluster.Overlay, nodes []int, req *PodRequest, scorers []WeightedScorer, rnd *rand.Rand) *refChooser {
	r := &refChooser{c: &chooser{ov: ov, req: req, scorers: scorers, rnd: rnd}}
	if nodes == nil {
		for i := 0; i < ov.NumNodes(); i++ {
			nodes = append(nodes, i)
		}
	}
	var scratch [4]Rejection
	for _, i := range nodes {
		if !cheapFits(ov, i, req) || len(staticCheck(ov.Node(i), req, false, scratch[:0])) > 0 {
			continue
		}
		r.slots = append(r.slots, refSlot{node: i})
		r.eval(&r.slots[len(r.slots)-1])
	}
	return r
}

func (r *refChooser) eval(s *refSlot) {
	c := r.c
	var scratch [4]Rejection
	if !cheapFits(c.ov, s.node, c.req) || len(nonGPUCheck(c.ov, s.node, c.req, false, scratch[:0])) > 0 {
		s.ok = false
		return
	}
	if guess, ok := c.predictWhole(s.node); ok {
		s.ok, s.predicted, s.assign = true, true, devices.Assignment{}
		s.score = combine(c.scorers, c.candidate(s.node, guess))
		return
	}
	a, rej := resourceCheck(c.ov, s.node, c.req, false, scratch[:0])
	if len(rej) > 0 {
		s.ok = false
		return
	}
	s.ok, s.predicted, s.assign = true, false, a
	s.score = combine(c.scorers, c.candidate(s.node, a))
}

func (r *refChooser) best() int {
	var tied []int
	for k := range r.slots {
		s := &r.slots[k]
		if !s.ok {
			continue
		}
		switch {
		case len(tied) == 0 || s.score > r.slots[tied[0]].score:
			tied = append(tied[:0], k)
		case s.score == r.slots[tied[0]].score:
			tied = append(tied, k)
		}
	}
	switch {
	case len(tied) == 0:
		return -1
	case len(tied) > 1 && r.c.rnd != nil:
		return tied[r.c.rnd.Intn(len(tied))]
	}
	return tied[0]
}

// place is assumeBest of the old code: the node and devices of one pod, "" when none fits.
func (r *refChooser) place(ref cluster.PodRef) string {
	ov := r.c.ov
	for {
		b := r.best()
		if b < 0 {
			return ""
		}
		s := &r.slots[b]
		if s.predicted {
			a, refusal := ov.Devices(s.node).Fit(r.c.req.GPU)
			if refusal != nil {
				s.ok = false
				continue
			}
			s.assign, s.predicted = a, false
		}
		if err := ov.AssumeAt(ref, s.node, r.c.req.Requests, s.assign); err != nil {
			s.ok = false
			continue
		}
		out := ov.Node(s.node).Name + fmt.Sprint(s.assign.IDs())
		r.eval(s)
		return out
	}
}

// placeNew is assumeBest of the real code, rendered like place.
func placeNew(c *chooser, ref cluster.PodRef) string {
	pp, ok := assumeBest(c.ov, c, ref.Workload, ref.PodSet, ref.Index)
	if !ok {
		return ""
	}
	return pp.Node + fmt.Sprint(pp.Devices.IDs())
}

func refRoom(ov *cluster.Overlay, domains []cluster.Domain, p *PodRequest) string {
	out := ""
	var scratch [2]Rejection
	for _, d := range domains {
		var sum int64
		for _, i := range d.Nodes {
			if len(staticCheck(ov.Node(i), p, false, scratch[:0])) == 0 {
				sum += estimate(ov, i, p)
			}
		}
		out += fmt.Sprintf("%s=%d ", d.ID, sum)
	}
	return out
}

func newRoom(ov *cluster.Overlay, domains []cluster.Domain, p *PodRequest) string {
	out := ""
	r := newRoomEstimator(ov, p)
	for _, d := range domains {
		out += fmt.Sprintf("%s=%d ", d.ID, r.domain(d))
	}
	return out
}

// nameScorer is a scorer that is not twin-safe: it reads the node's name.
type nameScorer struct{}

func (nameScorer) Name() string { return "name" }
func (nameScorer) Score(c *Candidate) int64 {
	return int64(len(c.Node.Name)%3) * MaxScore / 2
}

// equivNodes is a fleet of every GPU kind, in pools of twins, with labels, taints and
// conditions the static checks look at.
func equivNodes(rt *rapid.T) []cluster.Node {
	var nodes []cluster.Node
	add := func(pool string, n int, w func(name string) *gt.NodeWrapper) {
		for k := 0; k < n; k++ {
			name := fmt.Sprintf("%s-%d", pool, k)
			nw := w(name).Label("pool", pool).Label(rackLabel, fmt.Sprintf("r%d", k%3))
			switch rapid.IntRange(0, 9).Draw(rt, "oddity") {
			case 0:
				nw = nw.Taint("spot", "true", corev1.TaintEffectNoSchedule)
			case 1:
				nw = nw.Taint("soft", "x", corev1.TaintEffectPreferNoSchedule)
			case 2:
				nw = nw.Unschedulable()
			case 3:
				nw = nw.CPU("8")
			}
			nodes = append(nodes, nw.Obj())
		}
	}
	size := func(what string) int { return rapid.IntRange(0, 4).Draw(rt, what) }
	add("h100", size("h100"), func(n string) *gt.NodeWrapper { return gt.MakeNode(n).GPUs("H100", 8) })
	add("a100", size("a100"), func(n string) *gt.NodeWrapper { return gt.MakeNode(n).GPUs("A100-SXM4-80GB", 4) })
	add("mig", size("mig"), func(n string) *gt.NodeWrapper {
		return gt.MakeNode(n).GPUs("A100-SXM4-40GB", 2).MIG("all-balanced")
	})
	add("migs", size("migs"), func(n string) *gt.NodeWrapper {
		return gt.MakeNode(n).GPUs("A100-SXM4-40GB", 2).Sharing(devices.Sharing{Mode: devices.MIG, MIGStrategy: devices.MIGSingle, Layout: "all-1g.5gb"})
	})
	add("ts", size("ts"), func(n string) *gt.NodeWrapper {
		return gt.MakeNode(n).GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 3})
	})
	add("shared", size("shared"), func(n string) *gt.NodeWrapper {
		return gt.MakeNode(n).GPUs("T4", 2).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 2, RenameByDefault: true})
	})
	add("frac", size("frac"), func(n string) *gt.NodeWrapper {
		return gt.MakeNode(n).GPUs("V100", 4).Sharing(devices.Sharing{Mode: devices.Fractional})
	})
	add("cpu", size("cpu"), func(n string) *gt.NodeWrapper { return gt.MakeNode(n) })
	return nodes
}

const rackLabel = "topology.gantry.dev/rack"

var equivShapes = [][]string{
	{"nvidia.com/gpu", "1"}, {"nvidia.com/gpu", "2"}, {"nvidia.com/gpu", "4"}, {"nvidia.com/gpu", "8"},
	{"nvidia.com/gpu.shared", "1"}, {"nvidia.com/mig-1g.5gb", "1"}, {"nvidia.com/mig-1g.5gb", "2"},
	{"nvidia.com/mig-3g.20gb", "1"}, {"gantry.dev/gpu-milli", "300"}, {"gantry.dev/gpu-milli", "2000"},
	{"cpu", "4"},
}

// equivRequest draws a pod request: a shape, maybe a GPU model constraint, selector,
// toleration or flavor labels.
func equivRequest(rt *rapid.T) *PodRequest {
	shape := rapid.SampledFrom(equivShapes).Draw(rt, "shape")
	ps := &api.PodSet{Name: "main", Count: 1, Requests: gt.Req("cpu", rapid.SampledFrom([]string{"1", "16"}).Draw(rt, "cpu"), shape[0], shape[1])}
	var fc FlavorConstraint
	switch rapid.IntRange(0, 4).Draw(rt, "constraint") {
	case 1:
		ps.NodeSelector = map[string]string{"pool": rapid.SampledFrom([]string{"h100", "frac", "mig"}).Draw(rt, "pool")}
	case 2:
		ps.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
	case 3:
		fc.NodeLabels = map[string]string{rackLabel: "r1"}
	}
	p, err := NewPodRequest(ps, fc)
	if err != nil {
		rt.Fatal(err)
	}
	if rapid.IntRange(0, 3).Draw(rt, "models") == 0 {
		p.GPU.ModelConstraint = []devices.ModelID{rapid.SampledFrom([]devices.ModelID{"H100-SXM5-80GB", "A100-SXM4-80GB", "T4", "V100-SXM2-16GB"}).Draw(rt, "model")}
	}
	return p
}

// Property: over random fleets, random pods already bound and random requests, the
// chooser over the index's candidates (with twins and the written-out tie draw) picks
// the same nodes and devices, pod after pod, as the full scan it replaced; the domain
// estimates and the single-pod policy agree too.
func TestCandidatesChangeNoDecision(t *testing.T) {
	shapes := NewShapeStats()
	for _, s := range equivShapes {
		shapes.Observe(gt.Req(s[0], s[1]))
	}
	scorerSets := [][]WeightedScorer{DefaultScorers(), {{Spread{}, 1}}, {{Fragmentation{Shapes: shapes}, 1}}, {{nameScorer{}, 1}, {Binpack{}, 1}}}
	placed := 0
	rapid.Check(t, func(rt *rapid.T) {
		s, err := cluster.NewSnapshot(equivNodes(rt), []api.Topology{{Meta: api.Meta{Name: "t"}, Levels: []string{rackLabel}}})
		if err != nil {
			rt.Fatal(err)
		}
		if s.NumNodes() == 0 {
			return
		}
		ovNew, ovRef := s.Overlay(), s.Overlay()
		for k := range rapid.IntRange(0, 6).Draw(rt, "bound") { // some nodes are busy, so not twins
			p := equivRequest(rt)
			i := rapid.IntRange(0, s.NumNodes()-1).Draw(rt, "node")
			a, rej := resourceCheck(ovNew, i, p, false, nil)
			if len(rej) > 0 {
				continue
			}
			ref := cluster.PodRef{Workload: "ns/bound", PodSet: "p", Index: k}
			if ovNew.AssumeAt(ref, i, p.Requests, a) != nil || ovRef.AssumeAt(ref, i, p.Requests, a) != nil {
				rt.Fatalf("binding %s differs", ref)
			}
		}
		for round := range rapid.IntRange(1, 4).Draw(rt, "rounds") {
			p := equivRequest(rt)
			scorers := rapid.SampledFrom(scorerSets).Draw(rt, "scorers")
			var nodes []int
			if rapid.Bool().Draw(rt, "scoped") {
				doms := s.Domains(rackLabel)
				if len(doms) > 0 {
					nodes = doms[rapid.IntRange(0, len(doms)-1).Draw(rt, "domain")].Nodes
				}
			}
			if got, want := newRoom(ovNew, s.Domains(rackLabel), p), refRoom(ovRef, s.Domains(rackLabel), p); got != want {
				rt.Fatalf("round %d: domain room %s, full scan %s", round, got, want)
			}
			seed := rapid.Int64().Draw(rt, "seed")
			c := newChooser(ovNew, nodes, p, scorers, rand.New(rand.NewSource(seed)), nil)
			r := newRefChooser(ovRef, nodes, p, scorers, rand.New(rand.NewSource(seed)))
			for k := range rapid.IntRange(1, 5).Draw(rt, "pods") {
				ref := cluster.PodRef{Workload: api.WorkloadID(fmt.Sprintf("ns/w%d", round)), PodSet: "main", Index: k}
				got, want := placeNew(c, ref), r.place(ref)
				if got != want {
					rt.Fatalf("round %d pod %d (%v): placed on %q, full scan %q", round, k, p.Requests, got, want)
				}
				if got != "" {
					placed++
				}
			}
			pol := newScanPolicy("test", scorerRule{scorers: scorers})
			rn, rr := rand.New(rand.NewSource(seed)), rand.New(rand.NewSource(seed))
			got, gotOK := pol.Choose(ovNew, p, rn)
			want, wantOK := refChoose(ovRef, p, scorers, rr)
			if gotOK != wantOK || got.Node != want.Node || fmt.Sprint(got.Devices.IDs()) != fmt.Sprint(want.Devices.IDs()) || rn.Int63() != rr.Int63() {
				rt.Fatalf("round %d: Choose %v %v, full scan %v %v", round, got, gotOK, want, wantOK)
			}
		}
	})
	if placed == 0 {
		t.Fatal("no pod was ever placed: the property is vacuous")
	}
}

// refChoose is a scan policy's Choose done plainly: every node, static checks per node.
func refChoose(ov *cluster.Overlay, p *PodRequest, scorers []WeightedScorer, rnd *rand.Rand) (Choice, bool) {
	best, ties := Choice{Node: -1}, 0
	var bestScore int64
	var scratch [4]Rejection
	c := &chooser{ov: ov, req: p}
	for i := 0; i < ov.NumNodes(); i++ {
		if !cheapFits(ov, i, p) || len(staticCheck(ov.Node(i), p, false, scratch[:0])) > 0 ||
			len(nonGPUCheck(ov, i, p, false, scratch[:0])) > 0 {
			continue
		}
		var a devices.Assignment
		if !p.GPU.IsZero() {
			var rej []Rejection
			if a, rej = resourceCheck(ov, i, p, false, scratch[:0]); len(rej) > 0 {
				continue
			}
		}
		sc := combine(scorers, c.candidate(i, a))
		switch {
		case best.Node < 0 || sc > bestScore:
			best, bestScore, ties = Choice{Node: i, Devices: a}, sc, 1
		case sc == bestScore:
			ties++
			if rnd != nil && rnd.Intn(ties) == 0 {
				best = Choice{Node: i, Devices: a}
			}
		}
	}
	if best.Node < 0 {
		return Choice{}, false
	}
	return best, true
}

// best agrees with the plain rule (the tied slots in order, one Intn among them) on long
// runs of ties, including slots that do not fit, and draws exactly as much.
func TestBestDrawsOnceAmongTies(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		gen := rand.New(rand.NewSource(seed))
		n := 1 + gen.Intn(3000)
		c := &chooser{rnd: rand.New(rand.NewSource(seed)), slots: make([]slot, n), scores: make([]int64, n)}
		r := &refChooser{c: &chooser{rnd: rand.New(rand.NewSource(seed))}, slots: make([]refSlot, n)}
		for k := 0; k < n; k++ {
			ok := gen.Intn(10) > 0
			score := int64(gen.Intn(3)) * MaxScore
			c.slots[k] = slot{node: int32(k), ok: ok}
			c.scores[k] = noSlot
			if ok {
				c.scores[k] = score
			}
			r.slots[k] = refSlot{node: k, ok: ok, score: score}
		}
		for round := 0; round < 5; round++ {
			if got, want := c.best(), r.best(); got != want {
				t.Fatalf("seed %d round %d: best %d, plain rule %d", seed, round, got, want)
			}
		}
		if c.rnd.Int63() != r.c.rnd.Int63() {
			t.Fatalf("seed %d: the random streams parted", seed)
		}
	}
}
