package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
)

// migRequestFlags are `gantry mig request`'s settings.
type migRequestFlags struct {
	node, config, configFile, kubeconfig string
	wait                                 bool
	timeout, poll                        time.Duration
}

// newMIGCommand builds `gantry mig`: asking nodes for MIG layouts through the GPU
// Operator's nvidia.com/mig.config label.
func newMIGCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mig",
		Short: "Ask nodes for MIG layouts (named configs of a mig-parted file)",
	}
	cmd.AddCommand(newMIGRequestCommand())
	return cmd
}

func newMIGRequestCommand() *cobra.Command {
	var f migRequestFlags
	cmd := &cobra.Command{
		Use:   "request --node NODE --config NAME",
		Short: "Set nvidia.com/mig.config on a node and wait for nvidia.com/mig.config.state",
		Long: "request sets the node label nvidia.com/mig.config to a config of the mig-parted file\n" +
			"(Gantry's default, or --config-file: the file the node's MIG manager uses), then waits\n" +
			"until nvidia.com/mig.config.state is success or failed. NVIDIA's MIG manager and\n" +
			"Gantry's both act on the label. A config the file lacks is refused.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMIGRequest(cmd.Context(), cmd.OutOrStdout(), func() (kubernetes.Interface, error) { return kubeClient(f.kubeconfig) }, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.node, "node", "", "the node to reconfigure")
	fl.StringVar(&f.config, "config", "", "the mig-parted config name (all-balanced, all-1g.10gb, ...)")
	fl.StringVar(&f.configFile, "config-file", "", "the mig-parted config file the node's MIG manager uses (default: Gantry's)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file; empty: $KUBECONFIG or in-cluster config")
	fl.BoolVar(&f.wait, "wait", true, "wait for success or failed")
	fl.DurationVar(&f.timeout, "timeout", 10*time.Minute, "how long to wait")
	fl.DurationVar(&f.poll, "poll", 2*time.Second, "how often to read the node while waiting")
	return cmd
}

func kubeClient(kubeconfig string) (kubernetes.Interface, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return kubernetes.NewForConfig(cfg)
}

// runMIGRequest checks the flags and the config name before connecting, so a typo is
// refused without a cluster.
func runMIGRequest(ctx context.Context, w io.Writer, connect func() (kubernetes.Interface, error), f migRequestFlags) error {
	if f.node == "" || f.config == "" {
		return fmt.Errorf("mig request: --node and --config are required")
	}
	spec, err := migparted.LoadOrDefault(f.configFile)
	if err != nil {
		return err
	}
	if !spec.Has(f.config) {
		return fmt.Errorf("mig request: MIG config %q is not in %s (configs: %s)", f.config, spec.File, strings.Join(spec.Names(), ", "))
	}
	client, err := connect()
	if err != nil {
		return err
	}
	r := migprotocol.Requester{Client: client, Spec: spec, Poll: f.poll}
	if err := r.Request(ctx, f.node, f.config); err != nil {
		return err
	}
	fmt.Fprintf(w, "node %s: nvidia.com/mig.config=%s\n", f.node, f.config)
	if !f.wait {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	st, err := r.Wait(ctx, f.node)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "node %s: nvidia.com/mig.config.state=%s\n", f.node, st.State)
	return nil
}
