package cli

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/gantry-sched/gantry/pkg/bench"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/sim/trace"
	"github.com/spf13/cobra"
)

// benchJCTFlags are the flags of `gantry bench jct`.
type benchJCTFlags struct {
	trace, vc  string
	policies   []string
	window     string
	from, to   string
	nodes      int
	seed       int64
	limit      int
	scale      int
	eta        bool
	output     *outputFormat
	reportHTML string
	markdown   string
	svg        string
	// changed says which flags the command line set (they override --window).
	changed func(name string) bool
}

func newBenchJCTCommand() *cobra.Command {
	f := &benchJCTFlags{}
	cmd := &cobra.Command{
		Use:   "jct --trace philly:FILE --vc CSV [--policy fifo,gantry,...] [--window full|loaded] [--from DATE] [--to DATE] [--nodes N] [--eta]",
		Short: "Replay Philly jobs on their virtual-cluster quotas and compare JCT and queueing delay per policy",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.changed = cmd.Flags().Changed
			return runBenchJCT(f, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&f.trace, "trace", "", "philly:FILE (philly.csv)")
	cmd.Flags().StringVar(&f.vc, "vc", "", "virtual cluster node shares (philly_vc.csv)")
	cmd.Flags().StringSliceVar(&f.policies, "policy", bench.JCTPolicies(), "queueing policies: "+strings.Join(bench.JCTPolicies(), ", "))
	cmd.Flags().StringVar(&f.window, "window", "", "a named replay: "+windowHelp()+"; --from, --to and --nodes override its parts")
	cmd.Flags().StringVar(&f.from, "from", "2017-10-01", "first submission day (UTC, inclusive)")
	cmd.Flags().StringVar(&f.to, "to", "2017-11-30", "last submission day (UTC, inclusive)")
	cmd.Flags().IntVar(&f.nodes, "nodes", 0, "the cluster's node count, split over the virtual clusters by their shares (0 = their own shares)")
	cmd.Flags().Int64Var(&f.seed, "seed", 42, "random seed")
	cmd.Flags().IntVar(&f.limit, "limit", 0, "replay only the first N jobs of the window (0 = all)")
	cmd.Flags().IntVar(&f.scale, "node-percent", 100, "scale every virtual cluster's node share to this percent (at least one node; ignored with --nodes)")
	cmd.Flags().BoolVar(&f.eta, "eta", false, "measure explain's ETA at every queued job's submission against its real start")
	f.output = addOutputFlag(cmd)
	cmd.Flags().StringVar(&f.reportHTML, "report", "", "write the HTML report of the last policy's run to this file")
	cmd.Flags().StringVar(&f.markdown, "markdown", "", "also write the tables as Markdown to this file")
	cmd.Flags().StringVar(&f.svg, "svg", "", "write the queue-wait CDF per policy to this SVG file")
	return cmd
}

func windowHelp() string {
	var parts []string
	for _, w := range bench.JCTWindows() {
		parts = append(parts, w.Name+" ("+w.Doc+")")
	}
	return strings.Join(parts, ", ")
}

// replayGCPercent is the garbage collector's target during replays, unless GOGC says
// otherwise: a replay allocates briskly and keeps little, and collecting at five times
// the live heap instead of twice takes about a third off its CPU (measured on the
// loaded Philly window) for a few hundred MB more memory.
const replayGCPercent = 400

func runBenchJCT(f *benchJCTFlags, stdout, stderr io.Writer) error {
	if os.Getenv("GOGC") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(replayGCPercent))
	}
	w, err := f.resolveWindow()
	if err != nil {
		return err
	}
	imp, err := loadPhilly(f, w)
	if err != nil {
		return err
	}
	objs := imp.Objects
	fmt.Fprintf(stderr, "bench jct: %d jobs from %s to %s on %d GPUs%s\n", len(objs.Workloads), w.From, w.To,
		objs.NodePools[0].Count*objs.NodePools[0].GPUsPerNode, skippedNote(imp))
	meter := benchMeter(stderr, *f.output)
	each := func(i int, p string) ([]sim.Observer, func(bench.JCTResult)) {
		start := time.Now()
		bar, obs := simRun(meter, len(objs.Workloads), fmt.Sprintf("policy %s (%d of %d), ", p, i+1, len(f.policies)))
		return obs, func(r bench.JCTResult) {
			endSimRun(bar)
			fmt.Fprintf(stderr, "bench jct: %s: simulated %s in %s (%.1f s CPU)\n", p, sim.FormatDuration(r.End),
				time.Since(start).Round(time.Millisecond), r.CPU.Seconds())
		}
	}
	rep, err := bench.RunJCTReport(imp, w, f.policies, bench.JCTOptions{Seed: f.seed, ETA: f.eta}, each)
	if err != nil {
		return err
	}
	if err := f.writeFiles(rep); err != nil {
		return err
	}
	if f.output.machine() {
		return writeOutput(stdout, *f.output, rep)
	}
	if err := writeJCTTable(stdout, rep); err != nil {
		return err
	}
	if f.eta {
		fmt.Fprintln(stdout)
		return writeETATable(stdout, rep)
	}
	return nil
}

// resolveWindow is --window with the flags the command line set over it, or the flags
// alone.
func (f *benchJCTFlags) resolveWindow() (bench.JCTWindow, error) {
	w := bench.JCTWindow{Name: "custom", From: f.from, To: f.to, Nodes: f.nodes}
	if f.window != "" {
		named, err := bench.JCTWindowNamed(f.window)
		if err != nil {
			return w, fmt.Errorf("--window: %w", err)
		}
		w = named
		changed := f.changed
		if changed == nil {
			changed = func(string) bool { return false }
		}
		if changed("from") {
			w.From, w.Name = f.from, "custom"
		}
		if changed("to") {
			w.To, w.Name = f.to, "custom"
		}
		if changed("nodes") {
			w.Nodes, w.Name = f.nodes, "custom"
		}
	}
	if _, _, err := w.Bounds(); err != nil {
		return w, fmt.Errorf("--from/--to: %w", err)
	}
	return w, nil
}

// writeFiles writes the HTML report of the last replay and the Markdown tables, as asked.
func (f *benchJCTFlags) writeFiles(rep bench.JCTReport) error {
	if f.reportHTML != "" && len(rep.Results) > 0 {
		last := rep.Results[len(rep.Results)-1]
		if err := writeFile(f.reportHTML, func(w io.Writer) error {
			return report.WriteHTML(w, last.Report, "gantry bench jct: "+last.Policy)
		}); err != nil {
			return err
		}
	}
	if f.svg != "" {
		plot := bench.JCTWaitCDFPlot("Philly "+rep.Window.Name+": queue wait CDF per policy", rep)
		if err := writeFile(f.svg, plot.WriteSVG); err != nil {
			return err
		}
	}
	if f.markdown == "" {
		return nil
	}
	return writeFile(f.markdown, func(w io.Writer) error {
		if err := bench.JCTMarkdown(w, rep); err != nil || !f.eta {
			return err
		}
		if _, err := io.WriteString(w, "\n"); err != nil {
			return err
		}
		return bench.ETAMarkdown(w, rep)
	})
}

func writeJCTTable(out io.Writer, rep bench.JCTReport) error {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POLICY\tJOBS\tFINISHED\tAVG WAIT\tP50 WAIT\tP95 WAIT\tP99 WAIT\tAVG JCT\tP50 JCT\tP95 JCT\tP99 JCT\tPREEMPTED\t")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t\n", r.Policy, r.Jobs, r.Finished,
			sim.FormatDuration(r.Wait.Mean), sim.FormatDuration(r.Wait.P50), sim.FormatDuration(r.Wait.P95), sim.FormatDuration(r.Wait.P99),
			sim.FormatDuration(r.JCT.Mean), sim.FormatDuration(r.JCT.P50), sim.FormatDuration(r.JCT.P95), sim.FormatDuration(r.JCT.P99), r.Preempted)
	}
	return tw.Flush()
}

func writeETATable(out io.Writer, rep bench.JCTReport) error {
	tw := tabwriter.NewWriter(out, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "POLICY\tRUNTIMES\tQUEUED\tWITH ETA\tERR P50\tERR P90\tERR MEAN\tEARLY\t")
	for _, r := range rep.Results {
		for _, e := range r.ETA {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d.%d%%\t%s\t%s\t%s\t%d.%d%%\t\n", r.Policy, e.Runtimes, e.Started,
				e.SharePermille/10, e.SharePermille%10, sim.FormatDuration(e.AbsError.P50), sim.FormatDuration(e.P90),
				sim.FormatDuration(e.AbsError.Mean), e.EarlyPermille/10, e.EarlyPermille%10)
		}
	}
	return tw.Flush()
}

// loadPhilly reads the trace and VC files and imports the window.
func loadPhilly(f *benchJCTFlags, w bench.JCTWindow) (*trace.PhillyImport, error) {
	format, file, ok := strings.Cut(f.trace, ":")
	if !ok || format != "philly" {
		return nil, fmt.Errorf("--trace %q: want philly:FILE", f.trace)
	}
	if f.vc == "" {
		return nil, fmt.Errorf("--vc: the virtual cluster CSV (philly_vc.csv) is required")
	}
	imp, err := bench.LoadPhilly(bench.PhillyFiles{Jobs: file, VCs: f.vc}, w, f.scale)
	if err != nil {
		return nil, err
	}
	if f.limit > 0 && len(imp.Objects.Workloads) > f.limit {
		imp.Skipped["beyond --limit"] += len(imp.Objects.Workloads) - f.limit
		imp.Objects.Workloads = imp.Objects.Workloads[:f.limit]
	}
	return imp, nil
}

// skippedNote lists skipped job counts by reason, sorted, and the unknown virtual
// clusters by name.
func skippedNote(imp *trace.PhillyImport) string {
	if len(imp.Skipped) == 0 {
		return ""
	}
	keys := make([]string, 0, len(imp.Skipped))
	for k := range imp.Skipped {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		part := fmt.Sprintf("%d %s", imp.Skipped[k], k)
		if k == trace.SkipUnknownVC {
			part += " (" + countsText(imp.UnknownVCs) + ")"
		}
		parts = append(parts, part)
	}
	return " (skipped: " + strings.Join(parts, "; ") + ")"
}

// countsText writes name: count pairs sorted by name.
func countsText(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s: %d", n, m[n])
	}
	return strings.Join(parts, ", ")
}
