package cli

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	"github.com/spf13/cobra"
)

// newBenchCommand is `gantry bench`: the fragmentation and job-completion experiments.
func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Run the trace experiments: frag (placement fragmentation) and jct (queueing on Philly)",
	}
	cmd.AddCommand(newBenchFragCommand(), newBenchJCTCommand(), newBenchScaleCommand(), newBenchCyclesCommand())
	return cmd
}

// benchFragFlags are the flags of `gantry bench frag`.
type benchFragFlags struct {
	nodes, pods string
	policies    []string
	seeds       string
	inflate     int64
	csvOut      string
	output      *outputFormat
}

func newBenchFragCommand() *cobra.Command {
	f := &benchFragFlags{}
	cmd := &cobra.Command{
		Use:   "frag --nodes CSV --pods CSV [--policy P,...] [--seeds 42-51] [--csv OUT]",
		Short: "The FGD fragmentation experiment on an openb trace (no departures, inflate to 130%, no retry)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchFrag(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.nodes, "nodes", "", "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model)")
	cmd.Flags().StringVar(&f.pods, "pods", "", "openb pod list CSV")
	cmd.Flags().StringSliceVar(&f.policies, "policy", bench.FragPolicies(), "placement policies to compare")
	cmd.Flags().StringVar(&f.seeds, "seeds", "42-51", "seeds: N, N-M or a comma list")
	cmd.Flags().Int64Var(&f.inflate, "inflate", 130, "arriving GPU demand in percent of cluster GPUs")
	cmd.Flags().StringVar(&f.csvOut, "csv", "", "write every run's curve to this CSV file")
	f.output = addOutputFlag(cmd)
	return cmd
}

func runBenchFrag(f *benchFragFlags, stdout, stderr io.Writer) error {
	if f.nodes == "" || f.pods == "" {
		return fmt.Errorf("bench frag: --nodes and --pods are required (e.g. ../shared/traces/alibaba-gpu-v2023/csv/openb_node_list_gpu_node.csv)")
	}
	seeds, err := parseSeeds(f.seeds)
	if err != nil {
		return err
	}
	cfg, err := loadFragConfig(f)
	if err != nil {
		return err
	}
	known := map[string]bool{}
	for _, p := range bench.FragPolicies() {
		known[p] = true
	}
	var runs []bench.FragRun
	for _, name := range f.policies {
		if !known[name] {
			return fmt.Errorf("--policy %q: want one of %s", name, strings.Join(bench.FragPolicies(), ", "))
		}
	}
	meter := benchMeter(stderr, *f.output)
	for _, name := range f.policies {
		start := time.Now()
		var seed int64
		bar := newStepMeter(meter, "pods placed", func() string {
			return fmt.Sprintf("policy %s, seed %d (%d of %d runs)", name, seed, len(runs)+1, len(f.policies)*len(seeds))
		})
		cfg.Progress = bar.progress()
		for _, seed = range seeds {
			r, err := bench.RunFragOnce(cfg, bench.PlacementPolicy(name), seed)
			if err != nil {
				return err
			}
			runs = append(runs, r)
		}
		bar.finish()
		// Timings go to stderr so stdout stays identical across runs.
		fmt.Fprintf(stderr, "bench frag: %s: %d seeds in %s (%s per seed)\n", name, len(seeds),
			time.Since(start).Round(time.Millisecond), (time.Since(start) / time.Duration(len(seeds))).Round(time.Millisecond))
	}
	if f.csvOut != "" {
		if err := writeFile(f.csvOut, func(w io.Writer) error { return bench.WriteFragCSV(w, runs) }); err != nil {
			return err
		}
	}
	sums := bench.SummariseFrag(runs, f.inflate*10)
	if f.output.machine() {
		return writeOutput(stdout, *f.output, sums)
	}
	fmt.Fprintf(stdout, "share of arrived GPU demand left unallocated (mean ± std over %d seeds; %d nodes, %s GPUs, %d pods in the list)\n",
		len(seeds), len(cfg.Nodes), report.FormatMilli(trace.ClusterGPUs(cfg.Nodes)), len(cfg.Pods))
	return bench.WriteFragText(stdout, sums)
}

// loadFragConfig reads the node and pod lists.
func loadFragConfig(f *benchFragFlags) (bench.FragConfig, error) {
	nf, err := os.Open(f.nodes)
	if err != nil {
		return bench.FragConfig{}, fmt.Errorf("--nodes: %w", err)
	}
	defer nf.Close()
	nodes, err := trace.ReadOpenBNodes(nf, f.nodes)
	if err != nil {
		return bench.FragConfig{}, err
	}
	pf, err := os.Open(f.pods)
	if err != nil {
		return bench.FragConfig{}, fmt.Errorf("--pods: %w", err)
	}
	defer pf.Close()
	pods, err := trace.ReadOpenBPods(pf, f.pods)
	if err != nil {
		return bench.FragConfig{}, err
	}
	cfg := bench.FragConfig{Nodes: trace.OpenBNodePools(nodes, f.nodes, trace.OpenBOptions{}), InflatePercent: f.inflate, CurveStepPermille: 10}
	for _, p := range pods {
		cfg.Pods = append(cfg.Pods, bench.FragPodOf(p))
	}
	return cfg, nil
}

// parseSeeds reads "42", "42-51" or "1,5,9".
func parseSeeds(s string) ([]int64, error) {
	var out []int64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseInt(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("--seeds %q: %q is not a seed", s, part)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseInt(hi, 10, 64); err != nil || b < a || b-a > 10_000 {
				return nil, fmt.Errorf("--seeds %q: %q is not a range N-M with N ≤ M", s, part)
			}
		}
		for x := a; x <= b; x++ {
			out = append(out, x)
		}
	}
	return out, nil
}

// writeFile creates path and writes it with fn.
func writeFile(path string, fn func(io.Writer) error) error {
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := fn(out); err != nil {
		out.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return out.Close()
}
