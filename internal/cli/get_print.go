package cli

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/view"
)

// The tables of get and top. Every cell is filled ("-" for nothing) so columns stay
// two spaces apart and scripts can split them.

// table renders rows under a header with tabwriter, columns two spaces apart.
func table(header []string, rows [][]string) string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	_ = tw.Flush() // writes to a strings.Builder cannot fail
	return b.String()
}

func queuesTable(qs []view.Queue) string {
	rows := make([][]string, 0, len(qs))
	for _, q := range qs {
		rows = append(rows, []string{q.Name, dash(q.Cohort), formatGPU(q.NominalGPU), formatGPU(q.UsedGPU),
			formatGPU(q.BorrowedGPU), formatShare(q.FairShare), strconv.Itoa(q.Pending), strconv.Itoa(q.Admitted), yesNo(q.Held)})
	}
	return table([]string{"NAME", "COHORT", "NOMINAL GPU-EQ", "USED", "BORROWED", "FAIR SHARE", "PENDING", "ADMITTED", "HELD"}, rows)
}

func workloadsTable(ws []view.Workload) string {
	rows := make([][]string, 0, len(ws))
	for _, w := range ws {
		rows = append(rows, []string{w.ID, dash(w.ClusterQueue), string(w.Phase), formatPosition(w.Position),
			dash(w.Layer), dash(reasonCode(w.Reason)), formatGPU(w.GPU), formatETA(w.ETA), formatNodes(w.Nodes)})
	}
	return table([]string{"NAME", "QUEUE", "PHASE", "POSITION", "LAYER", "REASON", "GPUS", "ETA", "NODES"}, rows)
}

func nodesTable(ns []view.Node) string {
	rows := make([][]string, 0, len(ns))
	for _, n := range ns {
		var allocated resources.MilliGPU
		healthy := 0
		var models, modes []string
		for _, g := range n.GPUs {
			allocated += g.Allocated
			if g.Healthy {
				healthy++
			}
			models, modes = appendNew(models, g.Model), appendNew(modes, g.Mode)
		}
		rows = append(rows, []string{n.Name, dash(n.Pool), dash(strings.Join(models, ",")), dash(strings.Join(modes, ",")),
			strconv.Itoa(len(n.GPUs)), formatGPU(allocated), fmt.Sprintf("%d/%d", healthy, len(n.GPUs)), yesNo(n.Ready)})
	}
	return table([]string{"NAME", "POOL", "MODEL", "MODE", "GPUS", "ALLOCATED", "HEALTHY", "READY"}, rows)
}

// cohortsTable lists each cohort with the GPU-equivalents of the queues directly under
// it.
func cohortsTable(cs []view.Cohort, qs []view.Queue) string {
	byName := map[string]view.Queue{}
	for _, q := range qs {
		byName[q.Name] = q
	}
	rows := make([][]string, 0, len(cs))
	for _, c := range cs {
		var nominal, used, borrowed resources.MilliGPU
		for _, name := range c.Queues {
			q := byName[name]
			nominal, used, borrowed = nominal+q.NominalGPU, used+q.UsedGPU, borrowed+q.BorrowedGPU
		}
		rows = append(rows, []string{c.Name, dash(c.Parent), dash(strings.Join(c.Queues, ",")),
			formatGPU(nominal), formatGPU(used), formatGPU(borrowed)})
	}
	return table([]string{"NAME", "PARENT", "QUEUES", "NOMINAL GPU-EQ", "USED", "BORROWED"}, rows)
}

// formatGPU renders milli-GPU as GPUs: "8" when whole, else with three decimals
// ("0.142").
func formatGPU(m resources.MilliGPU) string {
	if m%resources.MilliPerGPU == 0 {
		return strconv.FormatInt(int64(m/resources.MilliPerGPU), 10)
	}
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%03d", sign, m/resources.MilliPerGPU, m%resources.MilliPerGPU)
}

// formatShare renders a fair share in permille as Kueue prints weighted shares; "-"
// when the queue borrows nothing, "inf" when it borrows with weight 0.
func formatShare(p int64) string {
	switch p {
	case 0:
		return "-"
	case math.MaxInt64:
		return "inf"
	}
	return report.FormatPermille(p) // as the dashboard shows it
}

func formatPosition(p int) string {
	if p == 0 {
		return "-"
	}
	return strconv.Itoa(p)
}

// formatETA renders a time from now; "-" when unknown.
func formatETA(d *time.Duration) string {
	if d == nil {
		return "-"
	}
	return sim.FormatDuration(sim.Seconds(*d))
}

// formatNodes lists up to three nodes and counts the rest.
func formatNodes(ns []string) string {
	const shown = 3
	if len(ns) <= shown {
		return dash(strings.Join(ns, ","))
	}
	return strings.Join(ns[:shown], ",") + fmt.Sprintf(",+%d", len(ns)-shown)
}

// reasonCode is the code of a reason: the simulator writes "NotSubmitted: submitted at
// 5m", whose words are for explain.
func reasonCode(r string) string {
	code, _, _ := strings.Cut(r, ":")
	return code
}

func appendNew(list []string, s string) []string {
	if s == "" || slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
