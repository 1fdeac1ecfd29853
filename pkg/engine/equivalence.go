package engine

import (
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/admission"
	"github.com/gantry-sched/gantry/pkg/api"
)

// Equivalent workloads are answered once per cycle. Admission's flavor assignment is a
// function of the quota usage, the ClusterQueue, the pod sets (requests, counts, node
// constraints) and the flavors ruled out; it does not read priority. Within a cycle
// usage only grows (admissions), so a NoFit stays NoFit for every later workload of the
// same class: the cycle keeps those answers and does not ask admission again. Fit,
// Borrow and Preempt answers are not kept: they move with every admission.

// assign is Quota.AssignWithout with the cycle's NoFit memo.
func (c *cycle) assign(w *api.Workload, cq string, without map[string]bool) admission.Assignment {
	key := cq + "\x00" + excludedKey(without) + "\x00" + shapeKey(w, admission.Assignment{})
	if a, ok := c.noFit[key]; ok {
		a.Workload = w.ID()
		return a
	}
	var a admission.Assignment
	if without == nil {
		a = c.in.Quota.Assign(w, cq)
	} else {
		a = c.in.Quota.AssignWithout(w, cq, without)
	}
	if a.Mode == admission.NoFit && a.Code != admission.InvalidWorkload {
		c.noFit[key] = a
	}
	return a
}

// excludedKey names a set of excluded flavors.
func excludedKey(without map[string]bool) string {
	if len(without) == 0 {
		return ""
	}
	names := make([]string, 0, len(without))
	for n, ok := range without {
		if ok {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}
