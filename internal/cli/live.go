package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/controller"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/gantry-sched/gantry/pkg/view"
	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// liveTimeout bounds the reads of one live command: a view is a handful of List calls.
const liveTimeout = time.Minute

// liveFlags name the cluster a live command reads, as kubectl names it.
type liveFlags struct {
	kubeconfig  string
	kubeContext string
}

func (f *liveFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster to read (default: $KUBECONFIG, else ~/.kube/config, as kubectl)")
	cmd.Flags().StringVar(&f.kubeContext, "context", "", "kubeconfig context to use (default: the current context)")
}

// given reports whether a cluster was named on the command line.
func (f *liveFlags) given() bool { return f.kubeconfig != "" || f.kubeContext != "" }

// restConfig loads the kubeconfig with kubectl's rules: --kubeconfig, else the files
// of $KUBECONFIG, else ~/.kube/config; --context picks the context.
func (f *liveFlags) restConfig() (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.kubeContext})
	cfg, err := cc.ClientConfig()
	switch {
	case clientcmd.IsEmptyConfig(err):
		return nil, errors.New("no cluster to read: no kubeconfig found ($KUBECONFIG, ~/.kube/config); " +
			"give --kubeconfig PATH for a cluster, or -f PATH to simulate manifests")
	case err != nil && f.kubeconfig != "":
		return nil, fmt.Errorf("--kubeconfig %s: %w", f.kubeconfig, err)
	case err != nil:
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// readView reads the cluster's view; Source is the API server's URL.
func (f *liveFlags) readView(ctx context.Context) (view.Snapshot, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return view.Snapshot{}, err
	}
	scheme, err := controller.NewScheme()
	if err != nil {
		return view.Snapshot{}, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return view.Snapshot{}, fmt.Errorf("cluster %s: %w", cfg.Host, err)
	}
	ctx, cancel := context.WithTimeout(ctx, liveTimeout)
	defer cancel()
	v, err := controller.ReadView(ctx, c)
	if err != nil {
		return view.Snapshot{}, fmt.Errorf("cluster %s: %w", cfg.Host, err)
	}
	v.Source = cfg.Host
	return v, nil
}

// viewFlags choose where a view comes from: manifests (and traces) simulated up to
// --at, as explain simulates them, or with no -f, a live cluster.
type viewFlags struct {
	sim  simFlags
	at   string
	live liveFlags
}

func (f *viewFlags) register(cmd *cobra.Command) {
	f.sim.register(cmd)
	cmd.Flags().StringVar(&f.at, "at", "", "with -f: simulated time to look at, e.g. 0s or 90m (default: the end of the simulation, --until or when no event is left)")
	f.live.register(cmd)
}

// fromFiles reports whether the view is simulated from inputs rather than read live.
func (f *viewFlags) fromFiles() bool { return len(f.sim.files) > 0 || len(f.sim.traces) > 0 }

// check refuses flags of the two sources mixed.
func (f *viewFlags) check(cmd *cobra.Command) error {
	switch {
	case f.fromFiles() && f.live.given():
		return errors.New("-f/--trace simulate manifests and --kubeconfig/--context read a cluster: give one or the other")
	case !f.fromFiles() && cmd.Flags().Changed("at"):
		return errors.New("--at is the simulated time of -f inputs: a live cluster is read as it is now")
	}
	return nil
}

// snapshot builds the view from the chosen source.
func (f *viewFlags) snapshot(cmd *cobra.Command) (view.Snapshot, error) {
	if err := f.check(cmd); err != nil {
		return view.Snapshot{}, err
	}
	if !f.fromFiles() {
		return f.live.readView(commandContext(cmd))
	}
	s, err := f.simulate(cmd)
	if err != nil {
		return view.Snapshot{}, err
	}
	return s.View(), nil
}

// simulate loads the inputs and runs the simulation to --at (explain's rule).
func (f *viewFlags) simulate(cmd *cobra.Command) (*sim.Simulator, error) {
	objs, opts, err := f.sim.prepare(cmd)
	if err != nil {
		return nil, err
	}
	s, err := sim.New(objs, opts)
	if err != nil {
		return nil, err
	}
	if err := runExplained(s, f.at, cmd.Flags().Changed("at"), opts.Until); err != nil {
		return nil, err
	}
	return s, nil
}

// commandContext is the command's context, or a background one when the command runs
// without (tests calling Execute).
func commandContext(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
