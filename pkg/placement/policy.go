package placement

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/gantry-sched/gantry/pkg/cluster"
	"github.com/gantry-sched/gantry/pkg/devices"
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

// Policy names for NewPolicy. The first six are the policies of the FGD paper (Weng et
// al., USENIX ATC'23) as its public simulator defines them (policy_paper.go,
// fgd_paper.go); PolicyGantry is Gantry's own (policy_gantry.go).
const (
	PolicyRandom     = "random"
	PolicyDotProd    = "dotprod"
	PolicyClustering = "clustering"
	PolicyPacking    = "packing"
	PolicyBestFit    = "bestfit"
	PolicyFGD        = "fgd"
	PolicyGantry     = "gantry"
)

// PolicyNames lists NewPolicy's policies, the paper's first.
func PolicyNames() []string {
	return []string{PolicyRandom, PolicyDotProd, PolicyClustering, PolicyPacking, PolicyBestFit, PolicyFGD, PolicyGantry}
}

// NewPolicy returns a named single-pod policy. shapes is the workload the fragmentation
// policies learn from (nil: none). The scorer names of ScorersFor are accepted too: a
// policy that ranks nodes by that one scorer with the device model's pick of GPUs.
func NewPolicy(name string, shapes *ShapeStats) (Policy, error) {
	if shapes == nil {
		shapes = NewShapeStats()
	}
	if r := paperRule(name, shapes); r != nil {
		return newScanPolicy(name, r), nil
	}
	if name == PolicyGantry {
		return newScanPolicy(name, newGantryRule(shapes)), nil
	}
	sc, err := scorerByName(name, shapes)
	if err != nil {
		return nil, fmt.Errorf("policy: %w (or one of %s)", err, strings.Join(PolicyNames(), ", "))
	}
	return newScanPolicy(name, scorerRule{scorers: []WeightedScorer{{sc, 1}}}), nil
}
