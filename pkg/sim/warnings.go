package sim

import (
	"fmt"
	"sort"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
)

// warnNamesShown is how many workload names a warning lists before "and N more": enough
// to find the files, short enough for one line on a fleet-size input.
const warnNamesShown = 3

// NoDurationWarning is the one-line warning for workloads without a gantry.dev/duration
// annotation: once started they run until the end of the simulation and never free their
// GPUs, which silently skews every figure after that. ok is false when all have one.
func NoDurationWarning(wls []api.Workload) (line string, ok bool) {
	var ids []string
	for i := range wls {
		if wls[i].Timing.Duration <= 0 {
			ids = append(ids, string(wls[i].ID()))
		}
	}
	if len(ids) == 0 {
		return "", false
	}
	sort.Strings(ids)
	noun, finish := "workloads have", "finish"
	if len(ids) == 1 {
		noun, finish = "workload has", "finishes"
	}
	shown := ids[:min(len(ids), warnNamesShown)]
	list := strings.Join(shown, ", ")
	if more := len(ids) - len(shown); more > 0 {
		list += fmt.Sprintf(" and %d more", more)
	}
	return fmt.Sprintf("warning: %d %s no %s annotation and never %s once started: %s",
		len(ids), noun, api.AnnotationDuration, finish, list), true
}
