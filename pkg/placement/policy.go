package placement

import (
	"fmt"
	"math/rand"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Choice is where a single pod goes: node index and name, and its devices.
type Choice struct {
	Node     int
	NodeName string
	Devices  devices.Assignment
}

// Policy chooses a node (and devices) for one pod: the single-pod policies of the
// fragmentation benchmark. Choose does not change the overlay; the caller assumes.
type Policy interface {
	Name() string
	Choose(ov *cluster.Overlay, p *PodRequest, rnd *rand.Rand) (Choice, bool)
}

// Policy names for NewPolicy.
const (
	PolicyRandom  = "random"
	PolicyBestFit = "best-fit"
	PolicyPacking = "packing"
	PolicyFGD     = "fgd"
)

// NewPolicy returns a named policy: random (uniform over feasible nodes), best-fit (least
// GPU share left on the node), packing (GPU packing: partly used GPUs first, then the
// most allocated node) or fgd (fragmentation gradient descent over shapes). The scorer
// names of ScorersFor are accepted too.
func NewPolicy(name string, shapes *ShapeStats) (Policy, error) {
	var sc Scorer
	switch name {
	case PolicyRandom:
		return &scorePolicy{name: name}, nil
	case PolicyBestFit:
		sc = BestFit{}
	case PolicyPacking:
		sc = Packing{}
	case PolicyFGD:
		sc = Fragmentation{Shapes: shapes}
	default:
		s, err := scorerByName(name, shapes)
		if err != nil {
			return nil, fmt.Errorf("policy: %w (or %s, %s, %s, %s)", err, PolicyRandom, PolicyBestFit, PolicyPacking, PolicyFGD)
		}
		sc = s
	}
	return &scorePolicy{name: name, scorers: []WeightedScorer{{sc, 1}}}, nil
}

// scorePolicy is a Policy made of scorers. It keeps a cache of device fits, so one value
// must not be used from several goroutines at once.
type scorePolicy struct {
	name    string
	scorers []WeightedScorer
	fits    FitCache
	cand    cluster.NodeSet // scratch for Choose
}

func (s *scorePolicy) Name() string { return s.name }

// Choose scans the candidate nodes (see candidates) once: cheap numeric pre-filter,
// device fit, score; ties go to the seeded random.
func (s *scorePolicy) Choose(ov *cluster.Overlay, p *PodRequest, rnd *rand.Rand) (Choice, bool) {
	best, ties := Choice{Node: -1}, 0
	var bestScore int64
	var scratch [4]Rejection
	c := &chooser{ov: ov, req: p}
	var fits []fitEntry
	if !p.GPU.IsZero() {
		fits = s.fits.shape(ov, fitKeyOf(p.GPU))
	}
	candidates(ov, p, true, &s.cand)
	for i := s.cand.Next(0); i >= 0; i = s.cand.Next(i + 1) {
		if !cheapFits(ov, i, p) || len(nonGPUCheck(ov, i, p, false, scratch[:0])) > 0 {
			continue
		}
		var a devices.Assignment
		if !p.GPU.IsZero() {
			var ok bool
			if a, ok = fitAt(&fits[i], ov, i, p); !ok {
				continue
			}
		}
		sc := combine(s.scorers, c.candidate(i, a))
		switch {
		case best.Node < 0 || sc > bestScore:
			best, bestScore, ties = Choice{Node: i, Devices: a}, sc, 1
		case sc == bestScore:
			ties++
			if rnd != nil && drawsZero(rnd, ties) {
				best = Choice{Node: i, Devices: a}
			}
		}
	}
	if best.Node < 0 {
		return Choice{}, false
	}
	best.NodeName = ov.Node(best.Node).Name
	return best, true
}

// BestFit prefers the node left with the least free GPU share (then cpu) after the pod.
type BestFit struct{}

func (BestFit) Name() string { return PolicyBestFit }
func (BestFit) Score(c *Candidate) int64 {
	var free int64
	for _, f := range c.GPUFree {
		free += int64(f)
	}
	free -= int64(c.Assignment.MilliGPU())
	const span = 16 * int64(resources.MilliPerGPU) // the largest nodes have 16 GPUs
	return MaxScore - min(max(free, 0), span)*MaxScore/span
}

// Packing is GPU packing: a pod that shares a GPU goes to a GPU already partly used when
// it can, and otherwise to the most allocated node (Binpack).
type Packing struct{}

func (Packing) Name() string { return PolicyPacking }
func (Packing) Score(c *Candidate) int64 {
	base := Binpack{}.Score(c) / 2
	for _, d := range c.Assignment.Devices {
		if d.Kind == devices.ShareDevice && d.GPU < len(c.GPUFree) && c.GPUFree[d.GPU] < resources.MilliPerGPU {
			return MaxScore/2 + base
		}
	}
	return base
}
