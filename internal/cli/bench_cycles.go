package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/spf13/cobra"
)

// benchCyclesFlags are the flags of `gantry bench cycles`.
type benchCyclesFlags struct {
	spec   bench.CycleSpec
	output *outputFormat
}

func newBenchCyclesCommand() *cobra.Command {
	f := &benchCyclesFlags{}
	cmd := &cobra.Command{
		Use:   "cycles --nodes N --jobs M --queues Q [--quiet K] [--bursts B --burst-size S] [-o table|json|yaml]",
		Short: "Time the scheduler's cycles on a generated fleet: the first (every job pending), cycles in which nothing changed, and cycles after bursts of completions",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchCycles(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVar(&f.spec.Scale.Nodes, "nodes", 1000, "8-GPU H100 nodes")
	cmd.Flags().IntVar(&f.spec.Scale.Jobs, "jobs", 10000, "jobs, all pending at the first cycle")
	cmd.Flags().IntVar(&f.spec.Scale.Queues, "queues", 100, "ClusterQueues")
	cmd.Flags().IntVar(&f.spec.Scale.Cohorts, "cohorts", 10, "cohorts the queues are spread over")
	cmd.Flags().Int64Var(&f.spec.Scale.Seed, "seed", 1, "generator seed")
	cmd.Flags().IntVar(&f.spec.Quiet, "quiet", 20, "cycles timed in which nothing changed")
	cmd.Flags().IntVar(&f.spec.Bursts, "bursts", 5, "cycles timed each after a burst of completions")
	cmd.Flags().IntVar(&f.spec.BurstSize, "burst-size", 1000, "running jobs completing in each burst")
	f.output = addOutputFlag(cmd)
	return cmd
}

func runBenchCycles(f *benchCyclesFlags, stdout, stderr io.Writer) error {
	if err := f.spec.Validate(); err != nil {
		return fmt.Errorf("bench %w", err)
	}
	bar := newStepMeter(benchMeter(stderr, *f.output), "cycles timed", func() string { return "" })
	spec := f.spec
	spec.Progress = bar.progress()
	r, err := bench.RunCycles(spec)
	if err != nil {
		return err
	}
	bar.finish()
	if f.output.machine() {
		return writeOutput(stdout, *f.output, r)
	}
	s := f.spec.Scale
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "fleet\t%d nodes, %d pending in %d queues (%d cohorts), seed %d\n", s.Nodes, r.Pending, s.Queues, s.Cohorts, s.Seed)
	fmt.Fprintf(tw, "first cycle\t%s: %d decisions (%.0f/s), %d admitted\n", r.First.Round(time.Millisecond),
		r.FirstDecisions, float64(r.FirstDecisions)/r.First.Seconds(), r.FirstAdmitted)
	fmt.Fprintf(tw, "quiet cycles\t%d: p50 %s, p99 %s\n", len(r.Quiet), round(bench.Percentile(r.Quiet, 50)), round(bench.Percentile(r.Quiet, 99)))
	fmt.Fprintf(tw, "burst cycles\t%d after %d completions each: p50 %s, p99 %s, %d admitted\n", len(r.Burst), f.spec.BurstSize,
		round(bench.Percentile(r.Burst, 50)), round(bench.Percentile(r.Burst, 99)), r.BurstAdmitted)
	return tw.Flush()
}

func round(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(100 * time.Microsecond)
}
