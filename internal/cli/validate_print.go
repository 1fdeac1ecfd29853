package cli

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/gantry-sched/gantry/pkg/manifest"
)

// validateResult is the document `validate -o json|yaml` prints on stdout, valid or
// not, so that a program reads one shape: valid, the summary's fields (only when
// valid; the embedded pointer is nil otherwise and its fields are left out) and
// problems (never null).
type validateResult struct {
	Valid bool `json:"valid"`
	*validateSummary
	Problems []validateProblem `json:"problems"`
}

// validateProblem is one problem of the input, in fields a program can act on.
type validateProblem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Name    string `json:"name,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// problemsOf converts the loader's problems into the document's.
func problemsOf(l manifest.ErrorList) []validateProblem {
	out := make([]validateProblem, 0, len(l))
	for _, e := range l {
		out = append(out, validateProblem{File: e.Source.File, Line: e.Source.Line, Kind: e.Kind, Name: e.Name, Field: e.Field, Message: e.Msg})
	}
	return out
}

// printSummary writes the human-readable summary of `gantry validate`.
func printSummary(out io.Writer, s validateSummary) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	c := s.Counts
	fmt.Fprintf(w, "OK: %d node pools, %d nodes, %d flavors, %d cohorts, %d cluster queues, %d local queues, %d priority classes, %d workloads, %d events\n",
		c["nodePools"], c["nodes"], c["flavors"], c["cohorts"], c["clusterQueues"], c["localQueues"], c["priorityClasses"], c["workloads"], c["events"])
	if s.Live != "" {
		fmt.Fprintln(w, s.Live)
	}

	fmt.Fprintln(w, "\nNODES AND GPUS (1000 milli-GPU = one GPU's compute)")
	fmt.Fprintln(w, "  POOL\tNODES\tCAPACITY TYPE\tGPU MODEL\tGPUS\tSHARING\tMILLI-GPU\tDEVICE-PLUGIN RESOURCES")
	for _, p := range append(s.Pools, s.Totals) {
		fmt.Fprintf(w, "  %s\t%d\t%s\t%s\t%d\t%s\t%d\t%s\n", p.Name, p.Nodes, dash(p.CapacityType), dash(p.Model), p.GPUs, dash(p.Sharing), p.MilliGPU, dash(p.GPUResources))
	}
	for _, warn := range s.NodeWarnings {
		fmt.Fprintln(w, "  warning:", warn)
	}

	fmt.Fprintln(w, "\nFLAVORS")
	fmt.Fprintln(w, "  NAME\tNODE LABELS\tTAINTS\tTOPOLOGY")
	for _, f := range s.Flavors {
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\n", f.Name, dash(f.NodeLabels), dash(f.Taints), dash(f.Topology))
	}

	fmt.Fprintln(w, "\nCOHORTS AND CLUSTER QUEUES (quota: nominal / borrowing limit / lending limit; - = none)")
	for _, root := range s.Cohorts {
		printCohort(w, root, "  ")
	}
	for _, q := range s.Unparented {
		printQueue(w, q, "  ")
	}

	fmt.Fprintln(w, "\nLOCAL QUEUES")
	for _, q := range s.LocalQueues {
		fmt.Fprintf(w, "  %s\t-> %s\n", q.Name, q.ClusterQueue)
	}

	fmt.Fprintln(w, "\nWORKLOADS BY QUEUE")
	fmt.Fprintln(w, "  QUEUE\tWORKLOADS\tPODS\tMILLI-GPU\tKINDS")
	for _, q := range s.Workloads {
		fmt.Fprintf(w, "  %s\t%d\t%d\t%d\t%s\n", q.Queue, q.Workloads, q.Pods, q.MilliGPU, q.Kinds)
	}

	if len(s.Events) > 0 {
		fmt.Fprintln(w, "\nEVENTS")
		fmt.Fprintln(w, "  AT\tTYPE\tNAME\tTARGET\tDETAIL")
		for _, e := range s.Events {
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", e.At, e.Type, e.Name, dash(e.Target), dash(e.Detail))
		}
	}
	return w.Flush()
}

func printCohort(w io.Writer, n *cohortNode, indent string) {
	fmt.Fprintf(w, "%scohort %s\n", indent, n.Name)
	printQuota(w, n.Quota, indent+"    ")
	for _, ch := range n.Children {
		printCohort(w, ch, indent+"  ")
	}
	for _, q := range n.Queues {
		printQueue(w, q, indent+"  ")
	}
}

func printQueue(w io.Writer, q queueSummary, indent string) {
	fmt.Fprintf(w, "%sClusterQueue %s\t%s, weight %s, %s\n", indent, q.Name, q.Strategy, q.Weight, q.Preemption)
	printQuota(w, q.Quota, indent+"    ")
}

func printQuota(w io.Writer, rows []quotaRow, indent string) {
	for _, r := range rows {
		fmt.Fprintf(w, "%s%s\t%s\t%s\n", indent, r.Flavor, r.Resource, strings.Join([]string{r.Nominal, r.Borrowing, r.Lending}, " / "))
	}
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
