package cli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/gantry-sched/gantry/pkg/resources"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
)

// topShown is how many of a queue's workloads top names.
const topShown = 3

func newTopCommand() *cobra.Command {
	var src viewFlags
	var filters getFilters
	var output *outputFormat
	cmd := &cobra.Command{
		Use:   "top [queues|nodes] [-f PATH... [--at T] | --kubeconfig PATH]",
		Short: "GPUs in use by ClusterQueue (GPU-equivalents used, nominal, borrowed, pods, biggest workloads) or by node",
		Long: `Show who uses the GPUs: per ClusterQueue (default) the GPU-equivalents in use against its
nominal quota, what it borrows, its running pods and its biggest workloads; per node
(top nodes) the GPUs allocated and the workloads holding them. Busiest first.

With -f the manifests are simulated up to --at; without -f a live cluster is read
through the kubeconfig, as get does.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind := kindQueues
			if len(args) == 1 {
				k, err := parseGetKind(args[0])
				if err != nil || (k != kindQueues && k != kindNodes) {
					return fmt.Errorf("top %q: want queues or nodes", args[0])
				}
				kind = k
			}
			v, err := src.snapshot(cmd)
			if err != nil {
				return err
			}
			if kind == kindNodes {
				return writeTop(cmd, *output, topNodes(v.Nodes), topNodesTable)
			}
			return writeTop(cmd, *output, topQueues(filters.queues(v.Queues), v.Workloads), topQueuesTable)
		},
	}
	src.register(cmd)
	cmd.Flags().StringVar(&filters.queue, "queue", "", "only this ClusterQueue")
	output = addOutputFlag(cmd)
	return cmd
}

// writeTop prints rows as a table or a document.
func writeTop[T any](cmd *cobra.Command, output outputFormat, rows []T, table func([]T) string) error {
	if output.machine() {
		return writeOutput(cmd.OutOrStdout(), output, rows)
	}
	_, err := fmt.Fprint(cmd.OutOrStdout(), table(rows))
	return err
}

// topQueue is one ClusterQueue's GPU use.
type topQueue struct {
	Name        string             `json:"name"`
	UsedGPU     resources.MilliGPU `json:"usedMilliGPU"`
	NominalGPU  resources.MilliGPU `json:"nominalMilliGPU"`
	BorrowedGPU resources.MilliGPU `json:"borrowedMilliGPU"`
	Pods        int                `json:"pods"`
	Top         []topWorkload      `json:"top,omitempty"`
}

// topWorkload is one admitted workload and its GPUs.
type topWorkload struct {
	ID  string             `json:"id"`
	GPU resources.MilliGPU `json:"milliGPU"`
}

// topQueues ranks the queues by GPUs in use, each with its pods placed and its
// biggest admitted workloads.
func topQueues(qs []view.Queue, ws []view.Workload) []topQueue {
	byQueue := map[string][]view.Workload{}
	for _, w := range ws {
		if w.Phase == view.Running || w.Phase == view.Admitted {
			byQueue[w.ClusterQueue] = append(byQueue[w.ClusterQueue], w)
		}
	}
	out := make([]topQueue, 0, len(qs))
	for _, q := range qs {
		row := topQueue{Name: q.Name, UsedGPU: q.UsedGPU, NominalGPU: q.NominalGPU, BorrowedGPU: q.BorrowedGPU}
		admitted := byQueue[q.Name]
		sort.SliceStable(admitted, func(i, j int) bool { return admitted[i].GPU > admitted[j].GPU })
		for i, w := range admitted {
			row.Pods += len(w.Placements)
			if i < topShown {
				row.Top = append(row.Top, topWorkload{ID: w.ID, GPU: w.GPU})
			}
		}
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].UsedGPU > out[j].UsedGPU })
	return out
}

func topQueuesTable(rows []topQueue) string {
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		top := make([]string, 0, len(r.Top))
		for _, w := range r.Top {
			top = append(top, w.ID+"="+formatGPU(w.GPU))
		}
		cells = append(cells, []string{r.Name, formatGPU(r.UsedGPU) + "/" + formatGPU(r.NominalGPU), formatPermilleOf(r.UsedGPU, r.NominalGPU),
			formatGPU(r.BorrowedGPU), strconv.Itoa(r.Pods), dash(strings.Join(top, ", "))})
	}
	return table([]string{"CLUSTERQUEUE", "GPU-EQ USED/NOMINAL", "USE", "BORROWED", "PODS", "TOP WORKLOADS (GPU-EQ)"}, cells)
}

// topNode is one node's GPU use.
type topNode struct {
	Name      string             `json:"name"`
	GPUs      int                `json:"gpus"`
	Allocated resources.MilliGPU `json:"allocatedMilliGPU"`
	Holders   []string           `json:"holders,omitempty"`
}

// topNodes ranks the nodes by GPUs allocated, each with the workloads holding them.
func topNodes(ns []view.Node) []topNode {
	out := make([]topNode, 0, len(ns))
	for _, n := range ns {
		row := topNode{Name: n.Name, GPUs: len(n.GPUs)}
		for _, g := range n.GPUs {
			row.Allocated += g.Allocated
			for _, d := range g.Devices {
				row.Holders = appendNew(row.Holders, d.Holder)
			}
		}
		sort.Strings(row.Holders)
		out = append(out, row)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Allocated > out[j].Allocated })
	return out
}

func topNodesTable(rows []topNode) string {
	cells := make([][]string, 0, len(rows))
	for _, r := range rows {
		total := resources.MilliGPU(r.GPUs) * resources.MilliPerGPU
		cells = append(cells, []string{r.Name, formatGPU(r.Allocated) + "/" + strconv.Itoa(r.GPUs), formatPermilleOf(r.Allocated, total),
			formatNodes(r.Holders)})
	}
	return table([]string{"NODE", "GPUS ALLOCATED", "USE", "WORKLOADS"}, cells)
}

// formatPermilleOf renders part of whole as a percentage ("-" when whole is 0).
func formatPermilleOf(part, whole resources.MilliGPU) string {
	if whole == 0 {
		return "-"
	}
	p := int64(part) * 1000 / int64(whole)
	return fmt.Sprintf("%d.%d%%", p/10, p%10)
}
