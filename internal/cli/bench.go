package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
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
	traceDir    string
	variants    []string
	policies    []string
	seeds       string
	inflate     int64
	parallel    int
	csvOut      string
	mdOut       string
	svgOut      string
	output      *outputFormat
}

// defaultTraceDir is where the openb CSVs live beside a checkout (see
// ../shared/traces/README.md).
const defaultTraceDir = "../shared/traces/alibaba-gpu-v2023/csv"

func newBenchFragCommand() *cobra.Command {
	f := &benchFragFlags{}
	cmd := &cobra.Command{
		Use:   "frag (--nodes CSV --pods CSV | --variants all|V,...) [--policy all|P,...] [--seeds 42-51]",
		Short: "The FGD paper's fragmentation experiment on openb traces (no departures, inflate to 130%, no retry)",
		Long: `Places an openb pod list, shuffled per seed and inflated to 130% of the cluster's GPUs, one
pod at a time with each policy (no departures, no retry) and reports, at 100% arrival and at
the end, the share of arrived GPU demand left unallocated and the paper's measure, 100 −
allocated ÷ cluster GPUs. Policies: the paper's random, dotprod, clustering, packing,
bestfit and fgd (as its simulator defines them), gantry (Gantry's default scorers one pod
at a time) and default (the engine's gang placement, as gantry simulate runs it).
--variants runs the paper's pod lists from --trace-dir (all: its 17 variants).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBenchFrag(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.nodes, "nodes", "", "openb node list CSV (sn,cpu_milli,memory_mib,gpu,model); default with --variants: the trace dir's GPU node list")
	cmd.Flags().StringVar(&f.pods, "pods", "", "openb pod list CSV")
	cmd.Flags().StringVar(&f.traceDir, "trace-dir", defaultTraceDir, "directory of openb_pod_list_<variant>.csv for --variants")
	cmd.Flags().StringSliceVar(&f.variants, "variants", nil, "pod list variants to run from --trace-dir (all: "+strings.Join(bench.FragVariants(), ",")+")")
	cmd.Flags().StringSliceVar(&f.policies, "policy", []string{"all"}, "placement policies to compare (all: "+strings.Join(bench.FragPolicies(), ",")+")")
	cmd.Flags().StringVar(&f.seeds, "seeds", "42-51", "seeds: N, N-M or a comma list")
	cmd.Flags().Int64Var(&f.inflate, "inflate", 130, "arriving GPU demand in percent of cluster GPUs")
	cmd.Flags().IntVar(&f.parallel, "parallel", 1, "runs at once (CPU times are per run only with 1)")
	cmd.Flags().StringVar(&f.csvOut, "csv", "", "write every run's curve to this CSV file")
	cmd.Flags().StringVar(&f.mdOut, "markdown", "", "write the results as markdown tables to this file")
	cmd.Flags().StringVar(&f.svgOut, "svg", "", "write the first variant's allocation curve per policy (mean over seeds) to this SVG file")
	f.output = addOutputFlag(cmd)
	return cmd
}

// fragSource is one pod list to run: its variant name and files.
type fragSource struct{ variant, nodes, pods string }

// fragSources resolves --nodes, --pods, --variants and --trace-dir.
func fragSources(f *benchFragFlags) ([]fragSource, error) {
	switch {
	case len(f.variants) > 0 && f.pods != "":
		return nil, fmt.Errorf("bench frag: --pods and --variants exclude each other")
	case len(f.variants) == 0 && (f.nodes == "" || f.pods == ""):
		return nil, fmt.Errorf("bench frag: --nodes and --pods are required, or --variants (e.g. --nodes %s/openb_node_list_gpu_node.csv --pods %s/openb_pod_list_default.csv)", defaultTraceDir, defaultTraceDir)
	case len(f.variants) == 0:
		v := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(f.pods), ".csv"), "openb_pod_list_")
		return []fragSource{{variant: v, nodes: f.nodes, pods: f.pods}}, nil
	}
	nodes := f.nodes
	if nodes == "" {
		nodes = filepath.Join(f.traceDir, "openb_node_list_gpu_node.csv")
	}
	var out []fragSource
	for _, v := range expandAll(f.variants, bench.FragVariants()) {
		out = append(out, fragSource{variant: v, nodes: nodes, pods: filepath.Join(f.traceDir, "openb_pod_list_"+v+".csv")})
	}
	return out, nil
}

// expandAll replaces "all" in list by every name of all.
func expandAll(list, all []string) []string {
	var out []string
	for _, x := range list {
		if x == "all" {
			out = append(out, all...)
			continue
		}
		out = append(out, x)
	}
	return out
}

// fragPolicies resolves --policy, refusing unknown names.
func fragPolicies(names []string) ([]string, error) {
	known := bench.FragPolicies()
	out := expandAll(names, known)
	for _, name := range out {
		if !slices.Contains(known, name) {
			return nil, fmt.Errorf("--policy %q: want all or one of %s", name, strings.Join(known, ", "))
		}
	}
	return out, nil
}

func runBenchFrag(f *benchFragFlags, stdout, stderr io.Writer) error {
	sources, err := fragSources(f)
	if err != nil {
		return err
	}
	seeds, err := parseSeeds(f.seeds)
	if err != nil {
		return err
	}
	policies, err := fragPolicies(f.policies)
	if err != nil {
		return err
	}
	meter := benchMeter(stderr, *f.output)
	var results []bench.FragVariantResult
	var runs []bench.FragRun
	for _, src := range sources {
		r, rs, err := runFragSource(f, src, policies, seeds, meter, stderr)
		if err != nil {
			return err
		}
		results, runs = append(results, r), append(runs, rs...)
	}
	if f.csvOut != "" {
		if err := writeFile(f.csvOut, func(w io.Writer) error { return bench.WriteFragCSV(w, runs) }); err != nil {
			return err
		}
	}
	if f.mdOut != "" {
		if err := writeFile(f.mdOut, func(w io.Writer) error { _, err := io.WriteString(w, bench.FragMarkdown(results)); return err }); err != nil {
			return err
		}
	}
	if f.svgOut != "" && len(results) > 0 {
		first := results[0].Variant
		var own []bench.FragRun
		for _, r := range runs {
			if r.Variant == first {
				own = append(own, r)
			}
		}
		plot := bench.FragAllocationPlot("openb "+first+": GPU allocated as demand arrives (mean over seeds)", own)
		if err := writeFile(f.svgOut, plot.WriteSVG); err != nil {
			return err
		}
	}
	if f.output.machine() {
		return writeOutput(stdout, *f.output, results)
	}
	return writeFragTables(stdout, results, len(seeds))
}

// runFragSource runs one pod list: load, check, run every policy and seed, summarise.
func runFragSource(f *benchFragFlags, src fragSource, policies []string, seeds []int64, meter *progressMeter, stderr io.Writer) (bench.FragVariantResult, []bench.FragRun, error) {
	cfg, err := loadFragConfig(src, f.inflate)
	if err != nil {
		return bench.FragVariantResult{}, nil, err
	}
	in, err := bench.CheckFragInput(cfg.Nodes, cfg.Pods)
	if err != nil {
		return bench.FragVariantResult{}, nil, fmt.Errorf("%s: %w", src.pods, err)
	}
	var done int
	bar := newStepMeter(meter, "pods placed", func() string {
		return fmt.Sprintf("%s, run %d of %d", src.variant, done+1, len(policies)*len(seeds))
	})
	cfg.Progress = bar.progress()
	type took struct {
		wall, cpu time.Duration
		n         int
	}
	times := map[string]*took{}
	runs, err := bench.RunFrag(cfg, policies, seeds, f.parallel, func(r bench.FragRun, wall, cpu time.Duration, n, _ int) {
		done = n
		t := times[r.Policy]
		if t == nil {
			t = &took{}
			times[r.Policy] = t
		}
		t.wall, t.cpu, t.n = t.wall+wall, t.cpu+cpu, t.n+1
	})
	bar.finish()
	if err != nil {
		return bench.FragVariantResult{}, nil, fmt.Errorf("%s: %w", src.pods, err)
	}
	// Timings go to stderr so stdout stays identical across runs.
	for _, p := range policies {
		if t := times[p]; t != nil && t.n > 0 {
			fmt.Fprintf(stderr, "bench frag: %s: %s: %d seeds, %s wall and %s CPU per seed\n", src.variant, p, t.n,
				(t.wall / time.Duration(t.n)).Round(time.Millisecond), (t.cpu / time.Duration(t.n)).Round(time.Millisecond))
		}
	}
	res := bench.FragVariantResult{Variant: src.variant, Nodes: len(cfg.Nodes), GPUs: trace.ClusterGPUs(cfg.Nodes),
		Pods: len(cfg.Pods), Input: in, Summaries: bench.SummariseFrag(runs, f.inflate*10)}
	return res, runs, nil
}

// writeFragTables prints each variant's header, input findings and summary table.
func writeFragTables(w io.Writer, results []bench.FragVariantResult, seeds int) error {
	for k, r := range results {
		if k > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%s: GPU demand left unallocated, %% of arrived and %% of cluster GPUs (mean ± std over %d seeds; %d nodes, %s GPUs, %d pods in the list)\n",
			r.Variant, seeds, r.Nodes, report.FormatMilli(r.GPUs), r.Pods)
		if s := r.Input.String(); s != "" {
			fmt.Fprintf(w, "input: %s\n", s)
		}
		if err := bench.WriteFragText(w, r.Summaries); err != nil {
			return err
		}
	}
	return nil
}

// loadFragConfig reads one pod list and its node list. Nodes accept up to 1001 pods, as
// in the paper's node YAML.
func loadFragConfig(src fragSource, inflate int64) (bench.FragConfig, error) {
	nf, err := os.Open(src.nodes)
	if err != nil {
		return bench.FragConfig{}, fmt.Errorf("--nodes: %w", err)
	}
	defer nf.Close()
	nodes, err := trace.ReadOpenBNodes(nf, src.nodes)
	if err != nil {
		return bench.FragConfig{}, err
	}
	pf, err := os.Open(src.pods)
	if err != nil {
		return bench.FragConfig{}, fmt.Errorf("--pods: %w", err)
	}
	defer pf.Close()
	pods, err := trace.ReadOpenBPods(pf, src.pods)
	if err != nil {
		return bench.FragConfig{}, err
	}
	cfg := bench.FragConfig{Variant: src.variant, Nodes: trace.OpenBNodePools(nodes, src.nodes, trace.OpenBOptions{MaxPods: 1001}),
		InflatePercent: inflate, CurveStepPermille: 10}
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
