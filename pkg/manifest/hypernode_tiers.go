package manifest

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// trackVolcano keeps a networkTopology's requests until the HyperNodes are known:
// highestTierName becomes a tier then, and every request is bound to the HyperNode
// Topology (resolveVolcanoRequests).
func (l *loader) trackVolcano(nt vcNetworkTopology, path string, c errs, reqs ...*api.TopologyRequest) {
	l.volcano.requests = append(l.volcano.requests, volcanoRequest{reqs: reqs, tierName: nt.HighestTierName, path: path, c: c})
}

// resolveVolcanoRequests maps each highestTierName to its tier (the tier of the
// HyperNodes with that tierName) and, when the inputs have HyperNodes, names the
// narrowest HyperNode level in each bounded request, so placement counts the tiers of
// the HyperNode Topology whatever other Topologies the inputs define.
func (l *loader) resolveVolcanoRequests() {
	names, tiers := api.HyperNodeTiers(l.objs.HyperNodes)
	for _, r := range l.volcano.requests {
		if r.tierName != "" {
			tier, ok := names[r.tierName]
			if !ok {
				r.c.add(r.path+".highestTierName", "%s", unknownTierName(r.tierName, names))
				continue
			}
			for _, t := range r.reqs {
				t.HighestTierAllowed = tier
			}
		}
		if len(tiers) == 0 {
			continue
		}
		for _, t := range r.reqs {
			if t.HighestTierAllowed > 0 {
				t.Level = api.HyperNodeTierLabel(1)
			}
		}
	}
}

func unknownTierName(name string, names map[string]int32) string {
	if len(names) == 0 {
		return fmt.Sprintf("unknown tier %q: no HyperNode (%s) in the inputs gives a spec.tierName", name, api.HyperNodeAPIVersion)
	}
	return fmt.Sprintf("unknown tier %q: the HyperNodes' tier names are %s", name, strings.Join(sortedKeys(names), ", "))
}
