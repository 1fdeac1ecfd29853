package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/gantry-sched/gantry/internal/dashboard"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/sim/report"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// dashboardFlags are the settings of `gantry dashboard`: the inputs of a simulation or
// the cluster to read, and where to serve.
type dashboardFlags struct {
	sim     simFlags
	live    liveFlags
	addr    string
	refresh time.Duration
}

func newDashboardCommand() *cobra.Command {
	var f dashboardFlags
	cmd := &cobra.Command{
		Use:   "dashboard [-f PATH... | --kubeconfig PATH]",
		Short: "Serve the web dashboard over a simulation (at any simulated time) or a live cluster",
		Long: `Serve Gantry's web dashboard: cohorts and ClusterQueues with their usage, pending
workloads in queue order with why they wait and their ETA, a node x GPU map of every
device and its holder, and charts over time.

With -f (or --trace) the inputs are simulated to the end first; the pages then show the
scheduler at any simulated time (?at=65m, or the time slider) and the simulation
report's charts. Without -f a live cluster is read through the kubeconfig (--kubeconfig,
$KUBECONFIG or ~/.kube/config), on every page and every --refresh, keeping a history
for the charts.

The dashboard listens on 127.0.0.1 unless --bind-address names another host.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runDashboard(cmd, &f) },
	}
	f.sim.register(cmd)
	f.live.register(cmd)
	cmd.Flags().StringVar(&f.addr, "bind-address", dashboard.DefaultAddress, "address to serve on; a port alone (:8090) means 127.0.0.1")
	cmd.Flags().DurationVar(&f.refresh, "refresh", 10*time.Second, "live cluster: how often pages reload and the charts' history is sampled")
	return cmd
}

// runDashboard builds the dashboard and serves it until interrupted.
func runDashboard(cmd *cobra.Command, f *dashboardFlags) error {
	srv, err := dashboardServer(cmd, f)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Start(ctx)
}

// dashboardServer builds the server over the chosen source: a simulation of -f/--trace
// (run to the end here) or the cluster of the kubeconfig.
func dashboardServer(cmd *cobra.Command, f *dashboardFlags) (*dashboard.Server, error) {
	fromFiles := len(f.sim.files) > 0 || len(f.sim.traces) > 0
	if fromFiles && f.live.given() {
		return nil, errors.New("-f/--trace simulate manifests and --kubeconfig/--context read a cluster: give one or the other")
	}
	if f.refresh <= 0 {
		return nil, fmt.Errorf("--refresh %s: must be positive", f.refresh)
	}
	if !fromFiles {
		return liveDashboard(cmd, f)
	}
	objs, opts, err := f.sim.prepare(cmd)
	if err != nil {
		return nil, err
	}
	if bar := newProgress(cmd.ErrOrStderr(), len(objs.Workloads), time.Now); bar != nil {
		opts.Observers = append(opts.Observers, bar)
		defer bar.done()
	}
	replay, rep, err := dashboard.RunSimulation(objs, opts, report.KPIOptions{Shapes: report.ShapesOf(objs.Workloads)})
	if err != nil {
		return nil, err
	}
	return simulationServer(cmd.ErrOrStderr(), replay, rep, f.addr, simulationTitle(f.sim.files, f.sim.traces))
}

// ServeSimulation serves the dashboard of a finished simulation on addr until the
// command is interrupted: `gantry simulate --serve ADDR` calls it after the run with the
// run's objects, options (their observers are not used again) and report.
func ServeSimulation(cmd *cobra.Command, objs *api.Objects, opts sim.Options, rep report.Report, addr string, inputs []string) error {
	srv, err := simulationServer(cmd.ErrOrStderr(), dashboard.NewSimulation(objs, opts, rep), rep, addr, simulationTitle(inputs, nil))
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(commandContext(cmd), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return srv.Start(ctx)
}

// simulationServer serves a Replay on addr and says where on stderr once listening.
func simulationServer(stderr io.Writer, replay *dashboard.Replay, rep report.Report, addr, title string) (*dashboard.Server, error) {
	bind, err := dashboard.ListenAddress(addr)
	if err != nil {
		return nil, fmt.Errorf("--bind-address: %w", err)
	}
	h, err := dashboard.New(replay, dashboard.Options{Title: title})
	if err != nil {
		return nil, err
	}
	span := fmt.Sprintf("simulated %s..%s", sim.FormatDuration(rep.Start), sim.FormatDuration(rep.End))
	return &dashboard.Server{Addr: bind, Handler: h, Ready: announce(stderr, span)}, nil
}

// liveDashboard serves the cluster of the kubeconfig, read through one client.
func liveDashboard(cmd *cobra.Command, f *dashboardFlags) (*dashboard.Server, error) {
	cfg, err := f.live.restConfig()
	if err != nil {
		return nil, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Host, err)
	}
	srv, err := dashboard.NewLiveServer(f.addr, liveReader(c, cfg.Host), dashboard.LiveOptions{Refresh: f.refresh, SampleEvery: f.refresh})
	if err != nil {
		return nil, fmt.Errorf("--bind-address: %w", err)
	}
	srv.Ready = announce(cmd.ErrOrStderr(), "cluster "+cfg.Host)
	return srv, nil
}

// liveReader reads the view of the cluster at host through c, each read bounded by
// liveTimeout.
func liveReader(c client.Reader, host string) func(context.Context) (view.Snapshot, error) {
	return func(ctx context.Context) (view.Snapshot, error) {
		ctx, cancel := context.WithTimeout(ctx, liveTimeout)
		defer cancel()
		v, err := controller.ReadView(ctx, c)
		if err != nil {
			return view.Snapshot{}, fmt.Errorf("cluster %s: %w", host, err)
		}
		v.Source = host
		return v, nil
	}
}

// announce prints where the dashboard listens.
func announce(w io.Writer, what string) func(string) {
	return func(addr string) {
		fmt.Fprintf(w, "dashboard of %s on http://%s/ (Ctrl-C stops)\n", what, addr)
	}
}

// simulationTitle heads the pages of a simulation's dashboard.
func simulationTitle(files, traces []string) string {
	return "Gantry simulation of " + strings.Join(append(append([]string(nil), files...), traces...), ", ")
}

// controllerDashboard is the dashboard `gantry controller --dashboard-bind-address`
// serves: the cluster as the controller's cached client c sees it (host names the API
// server), on every replica.
func controllerDashboard(addr string, c client.Reader, host string) (*dashboard.Server, error) {
	srv, err := dashboard.NewLiveServer(addr, liveReader(c, host), dashboard.LiveOptions{})
	if err != nil {
		return nil, fmt.Errorf("--dashboard-bind-address: %w", err)
	}
	return srv, nil
}
