package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/gantry-sched/gantry/pkg/placement"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/spf13/cobra"
)

// simFlags are the flags simulate and explain share.
type simFlags struct {
	files  []string
	traces []string
	policy string
	// headOrder is the cycle's order of visits (engine.HeadOrder).
	headOrder string
	seed      int64
	until     string
	grace     time.Duration
	// retryAll turns event-driven requeue off (every pending workload in every cycle),
	// to compare run times; decisions are the same.
	retryAll bool
	requeue  engine.RequeuePolicy
	strict   bool
	// podsReady: pod start delays and Kueue's waitForPodsReady (simulate_podsready.go).
	podsReady podsReadyFlags
}

func (f *simFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringSliceVarP(&f.files, "filename", "f", nil, "manifest files or directories (repeatable; - for stdin)")
	cmd.Flags().StringArrayVar(&f.traces, "trace", nil, traceFormats)
	cmd.Flags().StringVar(&f.policy, "policy", "default", "default (preempt + reserve + default scoring), fifo (no preemption, no reservation), no-preempt, "+
		"or a placement scorer for queues without their own policy: binpack, spread, fragmentation, whole-gpu-islands")
	cmd.Flags().StringVar(&f.headOrder, "head-order", string(engine.HeadOrderPriority), headOrderHelp)
	cmd.Flags().Int64Var(&f.seed, "seed", engine.DefaultPolicy().Seed, "random seed (same inputs and seed give the same run)")
	cmd.Flags().StringVar(&f.until, "until", "", "stop at this simulated time, e.g. 2h (default: when no event is left)")
	cmd.Flags().DurationVar(&f.grace, "grace", engine.DefaultPolicy().Grace, "preemption notice: time a victim gets to checkpoint")
	requeueFlags(cmd.Flags(), &f.requeue)
	f.podsReady.register(cmd.Flags())
	cmd.Flags().BoolVar(&f.strict, "strict", false, strictHelp)
	cmd.Flags().BoolVar(&f.retryAll, "retry-all", false, "hand every pending workload to every cycle instead of parking inadmissible ones until a relevant change (same decisions, slower; for comparison)")
}

// load reads manifests and traces into one object set; notes (jobs a trace importer
// left out) go to stderr. A trace that brings its own cluster (openb, philly) needs no
// manifest.
func (f *simFlags) load(stdin io.Reader, stderr io.Writer) (*api.Objects, error) {
	if len(f.files) == 0 && len(f.traces) == 0 {
		return nil, fmt.Errorf("-f: at least one manifest file or directory (or a --trace) is required")
	}
	objs := &api.Objects{}
	if len(f.files) > 0 {
		var err error
		if objs, err = manifest.Load(f.files, stdin); err != nil {
			return nil, err
		}
		f.podsReady.fromFile = objs.PodsReady
		if f.strict {
			if problems := skippedProblems(objs); len(problems) > 0 {
				return nil, problems
			}
		}
		warnSkipped(stderr, objs)
		if line, ok := liveLine(objs); ok {
			fmt.Fprintln(stderr, line)
		}
	}
	for _, t := range f.traces {
		more, notes, err := loadTrace(t)
		if err != nil {
			return nil, err
		}
		for _, n := range notes {
			fmt.Fprintln(stderr, n)
		}
		mergeObjects(objs, more)
	}
	if line, ok := sim.NoDurationWarning(objs.Workloads); ok {
		fmt.Fprintln(stderr, line)
	}
	return objs, nil
}

// prepare loads the inputs and builds the simulator options from the flags: the common
// start of simulate and explain.
func (f *simFlags) prepare(cmd *cobra.Command) (*api.Objects, sim.Options, error) {
	objs, err := f.load(cmd.InOrStdin(), cmd.ErrOrStderr())
	if err != nil {
		return nil, sim.Options{}, err
	}
	opts, err := f.options(objs)
	return objs, opts, err
}

// options turns the flags into simulator options: the policy engine.Build wires the
// scheduler from (the same builder the controller uses).
func (f *simFlags) options(objs *api.Objects) (sim.Options, error) {
	pol := engine.DefaultPolicy()
	pol.Grace, pol.Seed, pol.RetryAll, pol.Requeue = f.grace, f.seed, f.retryAll, f.requeue
	if err := pol.Requeue.Validate(); err != nil {
		return sim.Options{}, fmt.Errorf("--requeue-backoff-*: %w", err)
	}
	order, err := parseHeadOrder(f.headOrder)
	if err != nil {
		return sim.Options{}, err
	}
	pol.HeadOrder = order
	switch f.policy {
	case "default", "":
	case "fifo":
		pol.Preemption, pol.Reservations = false, false
	case "no-preempt":
		pol.Preemption = false
	default:
		pp := api.PlacementPolicy{Scorers: []api.WeightedScorer{{Name: f.policy, Weight: 1}}}
		if _, err := placement.ScorersFor(pp, nil); err != nil {
			return sim.Options{}, fmt.Errorf("--policy %q: want default, fifo, no-preempt or a scorer name: %w", f.policy, err)
		}
		pol.Placement = pp
	}
	var until time.Duration
	if f.until != "" {
		d, err := api.ParseDuration(f.until)
		if err != nil {
			return sim.Options{}, fmt.Errorf("--until: %w", err)
		}
		until = d
	}
	ready, err := f.podsReady.options(requeueBackoff{fl: f.podsReady.fl, base: f.requeue.BackoffBase, max: f.requeue.BackoffMax, limit: f.requeue.BackoffLimit})
	if err != nil {
		return sim.Options{}, err
	}
	return sim.Options{Until: until, Policy: pol, PodsReady: ready}, nil
}

func newSimulateCommand() *cobra.Command {
	var f simFlags
	var events, reportPath, serve string
	var heatmapAt []string
	cmd := &cobra.Command{
		Use:   "simulate -f PATH...",
		Short: "Replay workloads on a modelled cluster with the production engine and print KPIs",
		Args:  cobra.NoArgs,
	}
	f.register(cmd)
	output := addOutputFlag(cmd)
	cmd.Flags().StringVar(&events, "events", "", "write the event log to FILE, one JSON object per line")
	cmd.Flags().StringVar(&reportPath, "report", "", "write a self-contained HTML report to FILE.html")
	cmd.Flags().StringVar(&serve, "serve", "", "after the run, serve the web dashboard over the replay on ADDR (:8090 means 127.0.0.1:8090) until interrupted")
	cmd.Flags().StringSliceVar(&heatmapAt, "heatmap-at", nil, "also draw the node x GPU heat map at these simulated times (e.g. 30m,1h); the busiest moment is always drawn")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		times, err := heatmapTimes(heatmapAt)
		if err != nil {
			return err
		}
		return runSimulate(cmd, &f, *output, events, reportPath, serve, times)
	}
	return cmd
}

// heatmapTimes reads --heatmap-at.
func heatmapTimes(values []string) ([]sim.Seconds, error) {
	var out []sim.Seconds
	for _, v := range values {
		d, err := api.ParseDuration(strings.TrimSpace(v))
		if err != nil || d < 0 {
			return nil, fmt.Errorf("--heatmap-at %q: want a simulated time such as 30m or 1h", v)
		}
		out = append(out, sim.Seconds(d))
	}
	return out, nil
}

// runSimulate loads the inputs, runs the simulation with the KPI collector (plus the
// event log and progress bar when asked) and prints or writes the results.
func runSimulate(cmd *cobra.Command, f *simFlags, output outputFormat, events, reportPath, serve string, heatmaps []sim.Seconds) error {
	objs, opts, err := f.prepare(cmd)
	if err != nil {
		return err
	}
	kpis := report.NewKPICollector(report.KPIOptions{Shapes: report.ShapesOf(objs.Workloads), HeatmapTimes: heatmaps})
	opts.Observers = append(opts.Observers, kpis)
	var log *eventWriter
	if events != "" {
		if log, err = newEventWriter(events); err != nil {
			return err
		}
		// Error paths close here; the success path closes and checks the error below.
		defer log.close()
		opts.Observers = append(opts.Observers, log)
	}
	// Machine output is for programs: no progress bar beside it, even on a terminal.
	if !output.machine() {
		if bar := newProgress(cmd.ErrOrStderr(), len(objs.Workloads), time.Now); bar != nil {
			opts.Observers = append(opts.Observers, bar)
			defer bar.done()
		}
	}
	s, err := sim.New(objs, opts)
	if err != nil {
		return err
	}
	if err := s.Run(); err != nil {
		return err
	}
	if line, ok := sim.NeverFitsWarning(s.NeverFits()); ok {
		fmt.Fprintln(cmd.ErrOrStderr(), line)
	}
	if log != nil {
		if err := log.close(); err != nil {
			return fmt.Errorf("--events %s: %w", events, err)
		}
	}
	rep := kpis.Report(sim.Seconds(s.Now()))
	if reportPath != "" {
		if err := writeReport(reportPath, rep, f.files); err != nil {
			return err
		}
	}
	if output.machine() {
		err = writeOutput(cmd.OutOrStdout(), output, rep)
	} else {
		err = rep.WriteText(cmd.OutOrStdout())
	}
	if err != nil || serve == "" {
		return err
	}
	return ServeSimulation(cmd, objs, opts, rep, serve, f.files)
}

// eventWriter is an Observer writing one JSON line per event record.
type eventWriter struct {
	f      *os.File
	enc    *json.Encoder
	err    error
	closed bool
}

func newEventWriter(path string) (*eventWriter, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--events: %w", err)
	}
	return &eventWriter{f: f, enc: json.NewEncoder(f)}, nil
}

func (w *eventWriter) OnEvent(r sim.EventRecord) {
	if w.err == nil {
		w.err = w.enc.Encode(r)
	}
}

func (w *eventWriter) OnSample(sim.ClusterState) {}

// OnDelta makes the writer a sim.DeltaObserver: it reads no state, so the simulator
// builds no full State for it.
func (w *eventWriter) OnDelta(sim.StateDelta) {}

// close closes the file once and returns the first write or close error.
func (w *eventWriter) close() error {
	if !w.closed {
		w.closed = true
		if err := w.f.Close(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.err
}

// writeReport writes the HTML report to path.
func writeReport(path string, rep report.Report, inputs []string) error {
	out, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--report: %w", err)
	}
	werr := report.WriteHTML(out, rep, "Gantry simulation of "+strings.Join(inputs, ", "))
	if cerr := out.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("--report %s: %w", path, werr)
	}
	return nil
}
