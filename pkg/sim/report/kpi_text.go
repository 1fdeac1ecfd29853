package report

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/sim"
)

// WriteText renders the report as plain-text tables: one row per queue and the overall
// row, then the cluster-level KPIs and the quota table.
func (r Report) WriteText(w io.Writer) error {
	if err := r.writeQueueTable(w); err != nil {
		return err
	}
	r.writeClusterLines(w)
	return r.writeQuotaTable(w)
}

// writeQueueTable prints the per-queue workload KPIs. Preemptions and spot interruptions
// are separate columns: they have different causes (the scheduler's policy, the
// provider reclaiming nodes), and a policy comparison must not blame one on the other.
func (r Report) writeQueueTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "QUEUE\tSUBMITTED\tPLACED\tFINISHED\tPENDING\tWAIT P50\tWAIT P95\tWAIT P99\tJCT MEAN\tJCT P95\tPREEMPTED\tSPOT INTERRUPTED\tEVICTED\tLOST GPU-H\t")
	rows := append(append([]QueueKPIs{}, r.Queues...), r.Overall)
	for _, q := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n",
			q.Name, q.Submitted, q.Placed, q.Finished, q.StillPending,
			sim.FormatDuration(q.Wait.P50), sim.FormatDuration(q.Wait.P95), sim.FormatDuration(q.Wait.P99),
			sim.FormatDuration(q.JCT.Mean), sim.FormatDuration(q.JCT.P95),
			q.Preempted, q.Interrupted, q.Evicted, FormatGPUHours(q.LostGPUMilliSeconds))
	}
	return tw.Flush()
}

// writeClusterLines prints the cluster-level KPIs.
func (r Report) writeClusterLines(w io.Writer) {
	fmt.Fprintf(w, "\nsimulated %s .. %s\n", sim.FormatDuration(r.Start), sim.FormatDuration(r.End))
	for _, a := range r.Allocation {
		fmt.Fprintf(w, "GPU allocation %-28s mean %s\n", a.Key, FormatPermille(a.MeanPermille))
	}
	fmt.Fprintf(w, "stranded GPU capacity (mean)   %s GPUs\n", FormatMilli(r.MeanStrandedMilli))
	fmt.Fprintf(w, "FGD fragmentation (mean)       %s GPUs\n", FormatMilli(r.MeanFragMilli))
	n := r.disruptionCounts()
	fmt.Fprintf(w, "disruptions                    %s, %s, %s (lost %s GPU-hours)\n",
		counted(n[sim.EvPreempted], "preemption"), counted(n[sim.EvInterrupted], "spot interruption"),
		counted(n[sim.EvEvicted], "eviction"), FormatGPUHours(r.LostGPUMilliSeconds))
}

// counted is "1 eviction", "2 evictions".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// disruptionCounts counts the event log's preemption, interruption and eviction records
// by kind: one disruption makes a notice and an eviction, so their sum counts it twice.
func (r Report) disruptionCounts() map[sim.EventKind]int {
	n := map[sim.EventKind]int{}
	for _, p := range r.Preemptions {
		n[p.Event]++
	}
	return n
}

// writeQuotaTable prints GPU quota use per ClusterQueue in GPU-equivalents (see
// gpuEquivalentOf); the footnote says so, because a queue's quota names several
// resources (whole GPUs, MIG profiles) that only this conversion adds up.
func (r Report) writeQuotaTable(w io.Writer) error {
	if len(r.QuotaUse) == 0 {
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "\nCLUSTERQUEUE\tNOMINAL GPU-EQ\tMEAN USED\tPEAK USED\tUTILISATION\tMEAN BORROWED\tPEAK BORROWED\t")
	for _, q := range r.QuotaUse {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", q.ClusterQueue, FormatMilli(q.Nominal), FormatMilli(q.MeanUsed),
			FormatMilli(q.PeakUsed), FormatPermille(q.UtilisationPermille), FormatMilli(q.MeanBorrowed), FormatMilli(q.PeakBorrowed))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "GPU-EQ: GPU-equivalents, whole GPUs plus MIG instances at their share of a GPU (1g of 7 slices = 0.142); shared replicas not counted")
	return err
}

// FormatPermille renders thousandths as a percentage with one decimal ("73.4%").
func FormatPermille(p int64) string {
	sign := ""
	if p < 0 {
		sign, p = "-", -p
	}
	return fmt.Sprintf("%s%d.%d%%", sign, p/10, p%10)
}

// FormatMilli renders milli-GPU as GPUs with three decimals ("12.345").
func FormatMilli(m resources.MilliGPU) string {
	sign := ""
	if m < 0 {
		sign, m = "-", -m
	}
	return fmt.Sprintf("%s%d.%03d", sign, m/1000, m%1000)
}

// FormatGPUHours renders milli-GPU-seconds as GPU-hours with two decimals, rounded down.
func FormatGPUHours(milliSeconds int64) string {
	centi := milliSeconds / 36_000 // 1 GPU-hour = 3.6e6 milli-GPU-seconds; ×100 for two decimals
	return fmt.Sprintf("%d.%02d", centi/100, centi%100)
}
