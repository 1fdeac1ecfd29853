package placement

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// podSetGroups maps each pod set index in a group (Kueue's podset-group-name) to the
// indices of its group's members, in pod-set order; sets outside any group map to nil.
// A group placement cannot honour is refused with a reason naming the group: fewer than
// 2 pod sets, members that disagree on the mode or level, or a member with slices.
func podSetGroups(w *api.Workload) ([][]int, string) {
	out := make([][]int, len(w.PodSets))
	byName := map[string][]int{}
	var order []string
	for i, ps := range w.PodSets {
		if ps.Topology == nil || ps.Topology.Group == "" {
			continue
		}
		g := ps.Topology.Group
		if byName[g] == nil {
			order = append(order, g)
		}
		byName[g] = append(byName[g], i)
	}
	for _, g := range order {
		members := byName[g]
		if why := groupProblem(w, g, members); why != "" {
			return nil, why
		}
		for _, i := range members {
			out[i] = members
		}
	}
	return out, ""
}

func groupProblem(w *api.Workload, g string, members []int) string {
	first := w.PodSets[members[0]]
	if len(members) < 2 {
		return fmt.Sprintf("pod set group %q holds only pod set %q: a group needs 2 pod sets", g, first.Name)
	}
	for _, i := range members {
		t := w.PodSets[i].Topology
		switch {
		case t.Mode != api.TopologyRequired && t.Mode != api.TopologyPreferred || t.Level == "":
			return fmt.Sprintf("pod set group %q: pod set %q has no required or preferred level", g, w.PodSets[i].Name)
		case t.Mode != first.Topology.Mode || t.Level != first.Topology.Level:
			return fmt.Sprintf("pod set group %q: pod set %q asks for %s %s, pod set %q for %s %s: a group shares one level",
				g, w.PodSets[i].Name, t.Mode, t.Level, first.Name, first.Topology.Mode, first.Topology.Level)
		case t.SliceLevel != "" || t.HighestTierAllowed > 0:
			return fmt.Sprintf("pod set group %q: pod set %q has a slice or tier constraint, which a group cannot have", g, w.PodSets[i].Name)
		}
	}
	return ""
}

// placeGroup places the gang pods of every member of a pod set group in one domain of
// their shared level (for a preferred level: that level, then broader ones, then
// anywhere). Domains are tried best fit first for the member with the most pods. On
// success each member's extras stay in the domain; the pods come back per member.
func placeGroup(placers []*setPlacer, members []int, gang []int) ([][]PodPlacement, *Diagnosis) {
	big := members[0]
	for _, m := range members {
		if gang[m] > gang[big] {
			big = m
		}
	}
	lead := placers[big]
	levels, fallback := lead.levels()
	var why string
	for _, level := range levels {
		for _, d := range rankDomains(lead.ov, lead.ov.Domains(level), lead.req, gang[big]) {
			if pods, ok := placeMembersIn(placers, members, gang, d.Nodes); ok {
				return pods, nil
			}
		}
		why = fmt.Sprintf("pod set group %q: no %s domain has room for %s together", lead.ps.Topology.Group, level, groupShape(placers, members, gang))
	}
	if fallback {
		if pods, ok := placeMembersIn(placers, members, gang, nil); ok {
			return pods, nil
		}
		why = fmt.Sprintf("pod set group %q: %s do not fit together", lead.ps.Topology.Group, groupShape(placers, members, gang))
	}
	d := lead.diagnose(nil)
	d.Topology = why
	return nil, d
}

// placeMembersIn places every member's gang pods on nodes (nil: anywhere) or, failing,
// leaves the overlay as it was.
func placeMembersIn(placers []*setPlacer, members []int, gang []int, nodes []int) ([][]PodPlacement, bool) {
	ov := placers[members[0]].ov
	mark := ov.Mark()
	nexts := make([]int, len(members))
	for k, m := range members {
		nexts[k] = placers[m].next
	}
	out := make([][]PodPlacement, len(members))
	for k, m := range members {
		pods, d := placers[m].placeIn(nodes, gang[m])
		if d != nil {
			ov.Undo(mark)
			for k2, m2 := range members {
				placers[m2].next = nexts[k2]
			}
			return nil, false
		}
		out[k] = pods
	}
	for _, m := range members {
		placers[m].scope = nodes
	}
	return out, true
}

// groupShape describes the group's gang, e.g. "1 pod of leader + 4 pods of workers".
func groupShape(placers []*setPlacer, members []int, gang []int) string {
	parts := make([]string, len(members))
	for k, m := range members {
		unit := "pods"
		if gang[m] == 1 {
			unit = "pod"
		}
		parts[k] = fmt.Sprintf("%d %s of %s", gang[m], unit, placers[m].ps.Name)
	}
	return strings.Join(parts, " + ")
}
