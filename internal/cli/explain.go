package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/spf13/cobra"
)

func newExplainCommand() *cobra.Command {
	var f simFlags
	var at string
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "explain NAMESPACE/NAME -f PATH... [--at T]",
		Short: "Run the simulation to time T (default: its end) and explain which layer holds a workload, why, and its ETA",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.Contains(args[0], "/") {
				return fmt.Errorf("workload %q: want NAMESPACE/NAME", args[0])
			}
			objs, opts, err := f.prepare(cmd)
			if err != nil {
				return err
			}
			s, err := sim.New(objs, opts)
			if err != nil {
				return err
			}
			if err := runExplained(s, at, cmd.Flags().Changed("at"), opts.Until); err != nil {
				return err
			}
			e, err := s.Explain(api.WorkloadID(args[0]))
			if err != nil {
				return err
			}
			if output.machine() {
				return writeOutput(cmd.OutOrStdout(), *output, e)
			}
			return e.WriteText(cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	output = addOutputFlag(cmd)
	cmd.Flags().StringVar(&at, "at", "", "simulated time to explain the workload at, e.g. 0s or 90m (default: the end of the simulation, --until or when no event is left)")
	return cmd
}

// runExplained advances the simulation to the time explain looks at: the end of the run
// (--until, or when no event is left) when --at is not given, else the --at time, which
// must not lie after --until.
func runExplained(s *sim.Simulator, at string, given bool, until time.Duration) error {
	if !given {
		return s.Run()
	}
	t, err := api.ParseDuration(at)
	if err != nil {
		return fmt.Errorf("--at: %w", err)
	}
	if until > 0 && t > until {
		return fmt.Errorf("--at %s: after --until %s, where the simulation stops", at, sim.FormatDuration(sim.Seconds(until)))
	}
	return s.RunUntil(throughInstant(t))
}

// throughInstant is the RunUntil argument that processes every event at or before t.
// RunUntil(0) means "run every event", so t=0 (the submissions and placements of the
// first instant) becomes 1ns, the next instant the clock can tell apart; the report
// prints it as 0s. Only an input timing of a single nanosecond would be taken in too.
func throughInstant(t time.Duration) time.Duration {
	if t == 0 {
		return time.Nanosecond
	}
	return t
}
