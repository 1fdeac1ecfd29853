package cli

import (
	"fmt"
	"strings"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/spf13/cobra"
)

func newExplainCommand() *cobra.Command {
	var f simFlags
	var at string
	cmd := &cobra.Command{
		Use:   "explain NAMESPACE/NAME -f PATH... --at T",
		Short: "Run the simulation to time T and explain which layer holds a workload, why, and its ETA",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.Contains(args[0], "/") {
				return fmt.Errorf("workload %q: want NAMESPACE/NAME", args[0])
			}
			t, err := api.ParseDuration(at)
			if err != nil {
				return fmt.Errorf("--at: %w", err)
			}
			objs, opts, err := f.prepare(cmd)
			if err != nil {
				return err
			}
			opts.Until = 0
			s, err := sim.New(objs, opts)
			if err != nil {
				return err
			}
			if err := s.RunUntil(t); err != nil {
				return err
			}
			e, err := s.Explain(api.WorkloadID(args[0]))
			if err != nil {
				return err
			}
			return e.WriteText(cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&at, "at", "0s", "simulated time to explain the workload at, e.g. 90m")
	return cmd
}
