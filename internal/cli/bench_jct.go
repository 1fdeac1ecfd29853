package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	"github.com/spf13/cobra"
)

// benchJCTFlags are the flags of `gantry bench jct`.
type benchJCTFlags struct {
	trace, vc  string
	policies   []string
	from, to   string
	seed       int64
	limit      int
	scale      int
	output     *outputFormat
	reportHTML string
}

func newBenchJCTCommand() *cobra.Command {
	f := &benchJCTFlags{}
	cmd := &cobra.Command{
		Use:   "jct --trace philly:FILE --vc CSV [--policy fifo,gantry,sjf] [--from DATE] [--to DATE]",
		Short: "Replay Philly jobs on their virtual-cluster quotas and compare JCT and queueing delay per policy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchJCT(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.trace, "trace", "", "philly:FILE (philly.csv)")
	cmd.Flags().StringVar(&f.vc, "vc", "", "virtual cluster node shares (philly_vc.csv)")
	cmd.Flags().StringSliceVar(&f.policies, "policy", bench.JCTPolicies(), "queueing policies: fifo, gantry, sjf")
	cmd.Flags().StringVar(&f.from, "from", "2017-10-01", "first submission day (UTC, inclusive)")
	cmd.Flags().StringVar(&f.to, "to", "2017-11-30", "last submission day (UTC, inclusive)")
	cmd.Flags().Int64Var(&f.seed, "seed", 42, "random seed")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "replay only the first N jobs of the window (0 = all)")
	cmd.Flags().IntVar(&f.scale, "node-percent", 100, "scale every virtual cluster's node share to this percent (at least one node)")
	f.output = addOutputFlag(cmd)
	cmd.Flags().StringVar(&f.reportHTML, "report", "", "write the HTML report of the last policy's run to this file")
	return cmd
}

func runBenchJCT(f *benchJCTFlags, stdout, stderr io.Writer) error {
	objs, imp, err := loadPhilly(f)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "bench jct: %d jobs from %s to %s on %d GPUs%s\n", len(objs.Workloads), f.from, f.to,
		objs.NodePools[0].Count*objs.NodePools[0].GPUsPerNode, skippedNote(imp.Skipped))
	var results []bench.JCTResult
	meter := benchMeter(stderr, *f.output)
	for i, p := range f.policies {
		start := time.Now()
		bar, obs := simRun(meter, len(objs.Workloads), fmt.Sprintf("policy %s (%d of %d), ", p, i+1, len(f.policies)))
		r, err := bench.RunJCT(objs, p, f.seed, 0, obs...)
		if err != nil {
			return err
		}
		endSimRun(bar)
		fmt.Fprintf(stderr, "bench jct: %s: simulated %s in %s\n", p, sim.FormatDuration(r.End), time.Since(start).Round(time.Millisecond))
		results = append(results, r)
	}
	if f.reportHTML != "" && len(results) > 0 {
		last := results[len(results)-1]
		if err := writeFile(f.reportHTML, func(w io.Writer) error {
			return report.WriteHTML(w, last.Report, "gantry bench jct: "+last.Policy)
		}); err != nil {
			return err
		}
	}
	if f.output.machine() {
		return writeOutput(stdout, *f.output, results)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POLICY\tJOBS\tFINISHED\tAVG JCT\tAVG WAIT\tP95 WAIT\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t\n", r.Policy, r.Jobs, r.Finished,
			sim.FormatDuration(r.AvgJCT), sim.FormatDuration(r.AvgWait), sim.FormatDuration(r.P95Wait))
	}
	return tw.Flush()
}

// loadPhilly reads the trace and VC files and imports the chosen window.
func loadPhilly(f *benchJCTFlags) (*api.Objects, *trace.PhillyImport, error) {
	format, file, ok := strings.Cut(f.trace, ":")
	if !ok || format != "philly" {
		return nil, nil, fmt.Errorf("--trace %q: want philly:FILE", f.trace)
	}
	if f.vc == "" {
		return nil, nil, fmt.Errorf("--vc: the virtual cluster CSV (philly_vc.csv) is required")
	}
	from, err := time.Parse("2006-01-02", f.from)
	if err != nil {
		return nil, nil, fmt.Errorf("--from %q: want a date like 2017-10-01", f.from)
	}
	to, err := time.Parse("2006-01-02", f.to)
	if err != nil || to.Before(from) {
		return nil, nil, fmt.Errorf("--to %q: want a date like 2017-11-30, not before --from", f.to)
	}
	jf, err := os.Open(file)
	if err != nil {
		return nil, nil, fmt.Errorf("--trace: %w", err)
	}
	defer jf.Close()
	jobs, err := trace.ReadPhillyJobs(jf, file)
	if err != nil {
		return nil, nil, err
	}
	vf, err := os.Open(f.vc)
	if err != nil {
		return nil, nil, fmt.Errorf("--vc: %w", err)
	}
	defer vf.Close()
	vcs, err := trace.ReadPhillyVCs(vf, f.vc)
	if err != nil {
		return nil, nil, err
	}
	// --to is inclusive: keep jobs submitted before the next midnight.
	imp, err := trace.ImportPhilly(jobs, vcs, trace.PhillyOptions{From: from, To: to.AddDate(0, 0, 1), File: file, NodePercent: f.scale})
	if err != nil {
		return nil, nil, err
	}
	if f.limit > 0 && len(imp.Objects.Workloads) > f.limit {
		imp.Skipped["beyond --limit"] += len(imp.Objects.Workloads) - f.limit
		imp.Objects.Workloads = imp.Objects.Workloads[:f.limit]
	}
	return imp.Objects, imp, nil
}

// skippedNote lists skipped job counts by reason, sorted.
func skippedNote(skipped map[string]int) string {
	if len(skipped) == 0 {
		return ""
	}
	keys := make([]string, 0, len(skipped))
	for k := range skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%d %s", skipped[k], k))
	}
	return " (skipped: " + strings.Join(parts, "; ") + ")"
}
