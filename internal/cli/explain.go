package cli

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/spf13/cobra"
)

func newExplainCommand() *cobra.Command {
	var src viewFlags
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "explain NAMESPACE/NAME [-f PATH... [--at T] | --kubeconfig PATH]",
		Short: "Explain which layer holds a workload, why, what would admit it, and its ETA: in a simulation at time T (default: its end) or on a live cluster",
		Long: `Explain which layer holds a workload, why, the cheapest change that would admit it, its
queue position and ETA, or where it runs.

With -f the manifests are simulated to --at (default: the end of the simulation).
Without -f a live cluster is read through the kubeconfig (--kubeconfig, $KUBECONFIG or
~/.kube/config; --context); NAME is a Workload, or the job (Job, PyTorchJob, RayJob, ...)
it was made from. Both print the same layout.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !strings.Contains(args[0], "/") {
				return fmt.Errorf("workload %q: want NAMESPACE/NAME", args[0])
			}
			if err := src.check(cmd); err != nil {
				return err
			}
			if !src.fromFiles() {
				return explainLive(cmd, &src.live, *output, args[0])
			}
			return explainSimulated(cmd, &src, *output, args[0])
		},
	}
	src.register(cmd)
	output = addOutputFlag(cmd)
	return cmd
}

// explainSimulated simulates the inputs to --at and explains the workload there.
func explainSimulated(cmd *cobra.Command, src *viewFlags, output outputFormat, id string) error {
	s, err := src.simulate(cmd)
	if err != nil {
		return err
	}
	e, err := s.Explain(api.WorkloadID(id))
	if err != nil {
		return err
	}
	if output.machine() {
		return writeOutput(cmd.OutOrStdout(), output, e)
	}
	return explainFromSim(e).write(cmd.OutOrStdout())
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

// explainText is what explain prints, from a simulation or from a live cluster: one
// printer for both, so the two modes lay the same facts out the same way. Times are
// already rendered: simulated times as durations since the start, live ones as wall
// times.
type explainText struct {
	Workload     string
	At           string
	Phase        string
	ClusterQueue string
	Layer        string
	Reason       string
	Details      []string
	Remedy       string
	Position     int
	ETA          string // "" when unknown
	ETABasis     string
	Progress     string
	Preemptions  int
	Pods         []sim.PodRecord
}

// explainFromSim renders a simulator explanation.
func explainFromSim(e sim.Explanation) explainText {
	out := explainText{Workload: e.Workload, At: sim.FormatDuration(e.T), Phase: string(e.Phase), ClusterQueue: e.ClusterQueue,
		Layer: e.Layer, Reason: e.Reason, Details: e.Details, Remedy: e.Remedy, Position: e.Position, ETABasis: e.ETABasis,
		Progress: sim.FormatDuration(e.Progress), Preemptions: e.Preemptions, Pods: e.Pods}
	if e.ETA != nil {
		out.ETA = sim.FormatDuration(*e.ETA)
	}
	return out
}

// write prints the explanation: the one printer of both modes.
func (e explainText) write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "workload:      %s\n", e.Workload)
	fmt.Fprintf(&b, "at:            %s\n", e.At)
	fmt.Fprintf(&b, "phase:         %s\n", e.Phase)
	fmt.Fprintf(&b, "clusterQueue:  %s\n", dash(e.ClusterQueue))
	if e.Layer != "" {
		fmt.Fprintf(&b, "held by:       %s layer\n", e.Layer)
	}
	if e.Reason != "" {
		fmt.Fprintf(&b, "reason:        %s\n", e.Reason)
	}
	for _, d := range e.Details {
		fmt.Fprintf(&b, "  - %s\n", d)
	}
	if e.Remedy != "" {
		fmt.Fprintf(&b, "to admit it:   %s\n", e.Remedy)
	}
	if e.Position > 0 {
		fmt.Fprintf(&b, "queue position: %d\n", e.Position)
	}
	if e.ETA != "" {
		fmt.Fprintf(&b, "ETA:           %s (%s)\n", e.ETA, e.ETABasis)
	}
	fmt.Fprintf(&b, "progress:      %s (preempted %d times)\n", e.Progress, e.Preemptions)
	for _, p := range e.Pods {
		fmt.Fprintf(&b, "pod %s on %s devices %s\n", p.Name, p.Node, strings.Join(p.Devices, ","))
	}
	_, err := io.WriteString(w, b.String())
	return err
}
