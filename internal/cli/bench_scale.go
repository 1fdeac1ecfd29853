package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/spf13/cobra"
)

// benchScaleFlags are the flags of `gantry bench scale`.
type benchScaleFlags struct {
	spec      bench.ScaleSpec
	headOrder string
	output    *outputFormat
}

func newBenchScaleCommand() *cobra.Command {
	f := &benchScaleFlags{}
	cmd := &cobra.Command{
		Use:   "scale --nodes N --jobs M --queues Q --cohorts C --seed S [--spread D] [-o table|json|yaml]",
		Short: "Simulate a generated fleet (8-GPU H100 nodes, queues in cohorts, 1-32 GPU gangs) to completion and measure the cost",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchScale(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&f.spec.Nodes, "nodes", 100, "8-GPU H100 nodes")
	cmd.Flags().IntVar(&f.spec.Jobs, "jobs", 1000, "gangs of 1-32 GPUs, 10 minutes to 4 hours each")
	cmd.Flags().IntVar(&f.spec.Queues, "queues", 50, "ClusterQueues, the fleet's GPUs split evenly as nominal quota")
	cmd.Flags().IntVar(&f.spec.Cohorts, "cohorts", 3, "cohorts the queues are spread over (borrowing inside each)")
	cmd.Flags().Int64Var(&f.spec.Seed, "seed", 1, "generator seed (same flags give the same fleet and run)")
	cmd.Flags().DurationVar(&f.spec.Spread, "spread", 0, "submit the jobs uniformly over this span (0: all at t=0)")
	cmd.Flags().StringVar(&f.headOrder, "head-order", string(engine.HeadOrderPriority), headOrderHelp)
	f.output = addOutputFlag(cmd)
	return cmd
}

func runBenchScale(f *benchScaleFlags, stdout, stderr io.Writer) error {
	if err := f.spec.Validate(); err != nil {
		return fmt.Errorf("bench %w", err)
	}
	order, err := parseHeadOrder(f.headOrder)
	if err != nil {
		return err
	}
	f.spec.HeadOrder = order
	bar, obs := simRun(benchMeter(stderr, *f.output), f.spec.Jobs, "")
	r, err := bench.RunScale(f.spec, obs...)
	if err != nil {
		return err
	}
	endSimRun(bar)
	if f.output.machine() {
		return writeOutput(stdout, *f.output, r)
	}
	fleet := fmt.Sprintf("%d nodes (%d GPUs), %d jobs, %d queues in %d cohorts, seed %d", r.Nodes, r.GPUs, r.Jobs, r.Queues, r.Cohorts, r.Seed)
	if r.Spread > 0 {
		fleet += ", submitted over " + sim.FormatDuration(r.Spread)
	}
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "fleet\t%s\n", fleet)
	fmt.Fprintf(tw, "generate\t%s\n", r.Generate.Round(time.Microsecond))
	fmt.Fprintf(tw, "simulate wall\t%s\n", r.SimulateWall.Round(time.Millisecond))
	fmt.Fprintf(tw, "simulate CPU\t%s (process user+sys)\n", r.SimulateCPU.Round(time.Millisecond))
	fmt.Fprintf(tw, "peak RSS\t%.1f MiB\n", float64(r.PeakRSS)/(1<<20))
	fmt.Fprintf(tw, "jobs finished\t%d of %d (%d never placed)\n", r.Finished, r.Jobs, r.StillPending)
	fmt.Fprintf(tw, "cycles\t%d, %d pending workloads handed to them\n", r.Cycles, r.Considered)
	fmt.Fprintf(tw, "makespan\t%s (simulated)\n", sim.FormatDuration(r.Makespan))
	fmt.Fprintf(tw, "wait\tmean %s, p95 %s\n", sim.FormatDuration(r.MeanWait), sim.FormatDuration(r.P95Wait))
	return tw.Flush()
}
