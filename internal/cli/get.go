package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
)

// getKind is one kind `gantry get` lists.
type getKind string

const (
	kindQueues    getKind = "queues"
	kindWorkloads getKind = "workloads"
	kindNodes     getKind = "nodes"
	kindCohorts   getKind = "cohorts"
)

// parseGetKind reads the kind argument, accepting kubectl-style singulars and short
// names.
func parseGetKind(s string) (getKind, error) {
	switch strings.ToLower(s) {
	case "queues", "queue", "clusterqueues", "clusterqueue", "cq":
		return kindQueues, nil
	case "workloads", "workload", "wl":
		return kindWorkloads, nil
	case "nodes", "node", "no":
		return kindNodes, nil
	case "cohorts", "cohort":
		return kindCohorts, nil
	}
	return "", fmt.Errorf("%q: want queues, workloads, nodes or cohorts", s)
}

// getFilters narrow what get and top list.
type getFilters struct {
	namespace     string
	allNamespaces bool
	queue         string
}

func (f *getFilters) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.namespace, "namespace", "n", "", "workloads of this namespace only (default: every namespace)")
	cmd.Flags().BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "workloads of every namespace (the default; for kubectl habits)")
	cmd.Flags().StringVar(&f.queue, "queue", "", "only this ClusterQueue (workloads: its ClusterQueue or LocalQueue)")
}

func (f *getFilters) check() error {
	if f.namespace != "" && f.allNamespaces {
		return errors.New("-n and -A: give one or the other")
	}
	return nil
}

// workloads keeps the workloads the filters select.
func (f *getFilters) workloads(in []view.Workload) []view.Workload {
	out := []view.Workload{} // an empty list, not null, in -o json
	for _, w := range in {
		ns, _, _ := strings.Cut(w.ID, "/")
		if f.namespace != "" && ns != f.namespace {
			continue
		}
		if f.queue != "" && w.ClusterQueue != f.queue && w.LocalQueue != f.queue {
			continue
		}
		out = append(out, w)
	}
	return out
}

// queues keeps the ClusterQueues the filters select.
func (f *getFilters) queues(in []view.Queue) []view.Queue {
	if f.queue == "" {
		return in
	}
	out := []view.Queue{}
	for _, q := range in {
		if q.Name == f.queue {
			out = append(out, q)
		}
	}
	return out
}

func newGetCommand() *cobra.Command {
	var src viewFlags
	var filters getFilters
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "get queues|workloads|nodes|cohorts [-f PATH... [--at T] | --kubeconfig PATH]",
		Short: "List ClusterQueues, workloads, nodes or cohorts with Gantry's columns, over simulated manifests or a live cluster",
		Long: `List what the scheduler sees, with Gantry's columns:

  queues     COHORT, NOMINAL GPU-EQ, USED, BORROWED, FAIR SHARE, PENDING, ADMITTED, HELD
  workloads  QUEUE, PHASE, POSITION, LAYER, REASON, GPUS, ETA, NODES (pending ones in queue order)
  nodes      POOL, MODEL, MODE, GPUS, ALLOCATED, HEALTHY, READY
  cohorts    PARENT, QUEUES and the GPU-equivalents of their queues

With -f the manifests (and --trace inputs) are simulated up to --at, as explain does;
without -f a live cluster is read through the kubeconfig (--kubeconfig, $KUBECONFIG or
~/.kube/config; --context). GPU-EQ: GPU-equivalents, whole GPUs plus MIG instances at
their share of a GPU.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := parseGetKind(args[0])
			if err != nil {
				return err
			}
			if err := filters.check(); err != nil {
				return err
			}
			v, err := src.snapshot(cmd)
			if err != nil {
				return err
			}
			return writeGet(cmd, *output, kind, filters, v)
		},
	}
	src.register(cmd)
	filters.register(cmd)
	output = addOutputFlag(cmd)
	return cmd
}

// getDocument is the machine output of get: the listed items and when they were seen.
type getDocument struct {
	Source  string        `json:"source"`
	At      *time.Time    `json:"at,omitempty"`      // live: when the cluster was read
	Elapsed time.Duration `json:"elapsed,omitempty"` // simulation: simulated time
	Kind    getKind       `json:"kind"`
	Items   any           `json:"items"`
}

// writeGet prints the selected kind as a table or a document.
func writeGet(cmd *cobra.Command, output outputFormat, kind getKind, f getFilters, v view.Snapshot) error {
	var items any
	var table func() string
	switch kind {
	case kindQueues:
		qs := f.queues(v.Queues)
		items, table = qs, func() string { return queuesTable(qs) }
	case kindWorkloads:
		ws := f.workloads(v.Workloads)
		items, table = ws, func() string { return workloadsTable(ws) }
	case kindNodes:
		items, table = v.Nodes, func() string { return nodesTable(v.Nodes) }
	case kindCohorts:
		items, table = v.Cohorts, func() string { return cohortsTable(v.Cohorts, v.Queues) }
	}
	if output.machine() {
		doc := getDocument{Source: v.Source, Elapsed: v.Elapsed, Kind: kind, Items: items}
		if !v.At.IsZero() {
			doc.At = &v.At
		}
		return writeOutput(cmd.OutOrStdout(), output, doc)
	}
	_, err := fmt.Fprint(cmd.OutOrStdout(), table())
	return err
}
