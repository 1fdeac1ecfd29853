package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
)

// explainLive reads the cluster and explains one workload from the status the
// controller wrote, in the layout of a simulated explanation.
func explainLive(cmd *cobra.Command, live *liveFlags, output outputFormat, ref string) error {
	v, err := live.readView(commandContext(cmd))
	if err != nil {
		return err
	}
	w, err := findWorkload(v.Workloads, ref)
	if err != nil {
		return fmt.Errorf("cluster %s: %w", v.Source, err)
	}
	if output.machine() {
		return writeOutput(cmd.OutOrStdout(), output, w)
	}
	return explainFromView(w, v.At).write(cmd.OutOrStdout())
}

// findWorkload finds "namespace/name": the Workload of that name, else the one made
// from the job of that name (Job "train" has Workload "job-train", PyTorchJob "bert"
// "pytorchjob-bert"). Two jobs of different kinds with that name are ambiguous.
func findWorkload(ws []view.Workload, ref string) (view.Workload, error) {
	ns, name, _ := strings.Cut(ref, "/")
	var owned []view.Workload
	for _, w := range ws {
		if w.ID == ref {
			return w, nil
		}
		wns, _, _ := strings.Cut(w.ID, "/")
		if _, owner, ok := strings.Cut(w.Owner, "/"); ok && wns == ns && owner == name {
			owned = append(owned, w)
		}
	}
	switch len(owned) {
	case 0:
		return view.Workload{}, fmt.Errorf("workload %s: no Workload of that name, nor one made from a job of that name", ref)
	case 1:
		return owned[0], nil
	}
	names := make([]string, len(owned))
	for i, w := range owned {
		names[i] = w.ID + " (" + w.Owner + ")"
	}
	return view.Workload{}, fmt.Errorf("workload %s: jobs of several kinds have that name: %s; name the Workload", ref, strings.Join(names, ", "))
}

// explainFromView renders a live workload read at time at: times are wall times
// (UTC), the ETA with how far away it is.
func explainFromView(w view.Workload, at time.Time) explainText {
	out := explainText{Workload: w.ID, At: at.UTC().Format(time.RFC3339), Phase: string(w.Phase), ClusterQueue: w.ClusterQueue,
		Layer: w.Layer, Reason: w.Reason, Details: w.Details, Remedy: w.Remedy, Position: w.Position, ETABasis: w.ETABasis,
		Progress: sim.FormatDuration(sim.Seconds(w.Progress)), Preemptions: w.Preemptions}
	if w.ETA != nil {
		out.ETA = at.Add(*w.ETA).UTC().Format(time.RFC3339) + ", in " + sim.FormatDuration(sim.Seconds(*w.ETA))
	}
	for _, p := range w.Placements {
		out.Pods = append(out.Pods, sim.PodRecord{Name: p.Name, Node: p.Node, Devices: p.Devices})
	}
	return out
}
