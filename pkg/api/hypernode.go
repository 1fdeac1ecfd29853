package api

import (
	"sort"
	"strconv"
)

// Volcano's HyperNodes (topology.volcano.sh/v1alpha1) describe the network as a tree of
// performance domains: a HyperNode of tier 1 holds nodes (a ToR switch), one of tier 2
// holds tier-1 HyperNodes or nodes (a spine), and so on. Gantry's topologies are ordered
// node-label levels, so the HyperNodes of a set of files become one Topology
// (HyperNodeTopology) with one level per tier, broadest first, and every node gets the
// label HyperNodeTierLabel(t) naming its tier-t HyperNode. A node in no tier-t HyperNode
// but in a narrower one is labelled at tier t with that narrower HyperNode: Volcano's
// "within one HyperNode of tier <= t" is then "within one domain of level t".

// HyperNodeAPIVersion is the apiVersion of Volcano's HyperNode.
const HyperNodeAPIVersion = "topology.volcano.sh/v1alpha1"

// HyperNodeTopology is the name of the Topology the HyperNodes of the inputs become.
const HyperNodeTopology = "volcano-hypernodes"

// HyperNodeTierLabel is the node-label key of tier's level in HyperNodeTopology.
func HyperNodeTierLabel(tier int32) string {
	return "topology.gantry.dev/hypernode-tier-" + strconv.Itoa(int(tier))
}

// HyperNode is one Volcano HyperNode with its members resolved.
type HyperNode struct {
	Meta
	Tier     int32
	TierName string // spec.tierName, "" when not given
	// Nodes are the nodes inside it, directly or through member HyperNodes, sorted.
	Nodes []string
}

// HyperNodeLevels are HyperNodeTopology's levels for HyperNodes whose broadest tier is
// maxTier: one level per tier from maxTier down to 1, so that Volcano's tier t is the
// t-th level from the narrowest (the index highestTierAllowed counts) even when some
// tier has no HyperNode.
func HyperNodeLevels(maxTier int32) []string {
	out := make([]string, 0, maxTier)
	for t := maxTier; t >= 1; t-- {
		out = append(out, HyperNodeTierLabel(t))
	}
	return out
}

// HyperNodeLabels gives each node in a HyperNode its tier labels (see the comment at the
// top of this file): node name -> label key -> value. HyperNodes must already be checked
// (a node in at most one HyperNode per tier, tiers >= 1).
func HyperNodeLabels(hns []HyperNode) map[string]map[string]string {
	var maxTier int32
	byNode := map[string]map[int32]string{} // node -> tier -> HyperNode
	for _, h := range hns {
		maxTier = max(maxTier, h.Tier)
		for _, n := range h.Nodes {
			if byNode[n] == nil {
				byNode[n] = map[int32]string{}
			}
			byNode[n][h.Tier] = h.Name
		}
	}
	out := make(map[string]map[string]string, len(byNode))
	for n, tiers := range byNode {
		labels := map[string]string{}
		narrower := ""
		for t := int32(1); t <= maxTier; t++ {
			if hn, ok := tiers[t]; ok {
				narrower = hn
			}
			if narrower != "" {
				labels[HyperNodeTierLabel(t)] = narrower
			}
		}
		out[n] = labels
	}
	return out
}

// HyperNodeTiers maps each tier name to its tier, and lists the tiers in use, ascending.
func HyperNodeTiers(hns []HyperNode) (map[string]int32, []int32) {
	names := map[string]int32{}
	seen := map[int32]bool{}
	var tiers []int32
	for _, h := range hns {
		if h.TierName != "" {
			names[h.TierName] = h.Tier
		}
		if !seen[h.Tier] {
			seen[h.Tier] = true
			tiers = append(tiers, h.Tier)
		}
	}
	sort.Slice(tiers, func(i, j int) bool { return tiers[i] < tiers[j] })
	return names, tiers
}
