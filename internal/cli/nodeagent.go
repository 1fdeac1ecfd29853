package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/deviceplugin"
	"github.com/gantry-sched/gantry/pkg/nodeagent/kubenode"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml"
	"github.com/gantry-sched/gantry/pkg/nodeagent/nvml/mock"
)

// nodeAgentFlags are the node agent's settings, read once.
type nodeAgentFlags struct {
	dryRun          bool
	mock            string
	mode            string
	replicas        int
	renameByDefault bool
	migStrategy     string
	migLayout       string
	kubeletDir      string
	nodeName        string
	kubeconfig      string
	podResources    string
	migPoll         time.Duration
}

// newNodeAgentCommand builds `gantry node-agent`: GPU discovery, labels, device plugin,
// MIG layouts and health on one node.
func newNodeAgentCommand() *cobra.Command {
	var f nodeAgentFlags
	cmd := &cobra.Command{
		Use:   "node-agent [--dry-run] [--mock dgx-a100]",
		Short: "Discover the node's GPUs, label the node and serve the kubelet device plugin",
		Long: "node-agent reads the GPUs through NVML (or, with --mock dgx-a100, a simulated DGX A100),\n" +
			"prints the device model and the node labels it would apply (--dry-run), or serves the\n" +
			"kubelet device plugin and watches GPU health until stopped. --mig-layout applies a MIG\n" +
			"layout first (only to the mock in --dry-run).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNodeAgent(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the discovered model, devices and labels, and exit")
	fl.StringVar(&f.mock, "mock", "", "use a simulated node instead of NVML: dgx-a100")
	fl.StringVar(&f.mode, "sharing", "exclusive", "GPU sharing: exclusive, mig, time-slicing, mps or fractional")
	fl.IntVar(&f.replicas, "replicas", 0, "replicas per GPU for time-slicing and mps")
	fl.BoolVar(&f.renameByDefault, "rename-by-default", false, "advertise replicas as nvidia.com/gpu.shared")
	fl.StringVar(&f.migStrategy, "mig-strategy", "single", "MIG strategy: single or mixed")
	fl.StringVar(&f.migLayout, "mig-layout", "", "MIG layout to apply first (all-1g.5gb, all-balanced, custom:3g.20gb,4g.20gb, ...)")
	fl.StringVar(&f.kubeletDir, "kubelet-dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin directory")
	fl.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file; empty: in-cluster config")
	fl.StringVar(&f.podResources, "pod-resources-socket", "/var/lib/kubelet/pod-resources/kubelet.sock", "the kubelet's pod-resources socket")
	fl.DurationVar(&f.migPoll, "mig-poll", 30*time.Second, "how often to check the node's "+nodeagent.AnnotationMIGLayout+" annotation")
	return cmd
}

// sharing is the flags' sharing config, validated against nothing yet (discovery does).
func (f nodeAgentFlags) sharing() (devices.Sharing, error) {
	s := devices.Sharing{
		Mode: devices.SharingMode(strings.ToLower(f.mode)), Replicas: f.replicas,
		RenameByDefault: f.renameByDefault, MIGStrategy: devices.MIGStrategy(strings.ToLower(f.migStrategy)),
	}
	switch s.Mode {
	case devices.Exclusive, devices.MIG, devices.TimeSlicing, devices.MPS, devices.Fractional:
	default:
		return s, fmt.Errorf("--sharing %q: want exclusive, mig, time-slicing, mps or fractional", f.mode)
	}
	if s.MIGStrategy != devices.MIGSingle && s.MIGStrategy != devices.MIGMixed {
		return s, fmt.Errorf("--mig-strategy %q: want single or mixed", f.migStrategy)
	}
	if f.migLayout != "" {
		s.Mode = devices.MIG
	}
	return s, nil
}

// openNVML returns the mock or the real library, initialised.
func openNVML(name string) (nvml.Interface, error) {
	var lib nvml.Interface
	switch name {
	case "":
		real, err := nvml.New()
		if err != nil {
			return nil, err
		}
		lib = real
	case "dgx-a100":
		lib = mock.NewDGXA100()
	default:
		return nil, fmt.Errorf("--mock %q: the only simulated node is dgx-a100", name)
	}
	if r := lib.Init(); r != nvml.SUCCESS {
		return nil, nvml.Wrap(r, "initialising NVML")
	}
	return lib, nil
}

func runNodeAgent(cmd *cobra.Command, f nodeAgentFlags) error {
	s, err := f.sharing()
	if err != nil {
		return err
	}
	if !f.dryRun && f.mock != "" {
		return fmt.Errorf("--mock needs --dry-run: a simulated node cannot serve a real kubelet")
	}
	lib, err := openNVML(f.mock)
	if err != nil {
		return err
	}
	defer lib.Shutdown()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	log := &logUpdater{w: cmd.ErrOrStderr()}
	if f.migLayout != "" {
		st, err := nodeagent.NewMIGManager(lib, noGPUPods{}, log, s.MIGStrategy).Apply(ctx, f.migLayout)
		if err != nil {
			return err
		}
		if st.State != nodeagent.MIGApplied {
			return fmt.Errorf("MIG layout %s", st.Annotation())
		}
	}
	d, err := nodeagent.Discover(lib, s)
	if err != nil {
		return err
	}
	inv, err := nodeagent.NewInventory(d, s)
	if err != nil {
		return err
	}
	if f.dryRun {
		return printDiscovery(cmd.OutOrStdout(), d, inv, nodeagent.Labels(d, s))
	}
	return serveNodeAgent(ctx, cmd.ErrOrStderr(), f, lib, d, inv, s)
}

// agentEnv is what the serving node agent talks to.
type agentEnv struct {
	w    io.Writer
	node *kubenode.Node
	pods nodeagent.PodLookup
}

// connect builds the Node writer and the pod lookup from the flags.
func connect(w io.Writer, f nodeAgentFlags) (agentEnv, func(), error) {
	if f.nodeName == "" {
		return agentEnv{}, nil, fmt.Errorf("--node-name is empty and $NODE_NAME is not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", f.kubeconfig)
	if err != nil {
		return agentEnv{}, nil, fmt.Errorf("kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return agentEnv{}, nil, fmt.Errorf("kubernetes client: %w", err)
	}
	conn, err := grpc.NewClient("unix://"+f.podResources, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return agentEnv{}, nil, fmt.Errorf("kubelet pod-resources at %s: %w", f.podResources, err)
	}
	node := &kubenode.Node{Client: client, Name: f.nodeName, Now: time.Now}
	lookup := &kubenode.Lookup{Node: node, Allocated: kubenode.PodResources{Client: podresourcesv1.NewPodResourcesListerClient(conn)}}
	return agentEnv{w: w, node: node, pods: lookup}, func() { conn.Close() }, nil
}

// serveNodeAgent labels the node, runs the device plugins, the health loop and the MIG
// trigger until ctx ends. After a MIG re-layout it returns an error, so the DaemonSet
// restarts the agent and it advertises the new devices.
func serveNodeAgent(ctx context.Context, w io.Writer, f nodeAgentFlags, lib nvml.Interface, d *nodeagent.Discovery, inv *nodeagent.Inventory, s devices.Sharing) error {
	env, closeEnv, err := connect(w, f)
	if err != nil {
		return err
	}
	defer closeEnv()
	if err := env.node.SetLabels(ctx, nodeagent.Labels(d, s)); err != nil {
		return err
	}
	if err := startPlugins(ctx, env, inv, f.kubeletDir); err != nil {
		return err
	}
	hw, err := nodeagent.NewHealthWatcher(lib, d, inv, func(ev nodeagent.HealthEvent) {
		fmt.Fprintf(w, "unhealthy: %s (%s)\n", strings.Join(ev.IDs, ","), ev.Reason)
		if err := env.node.SetUnhealthyDevices(ctx, inv.Unhealthy()); err != nil {
			fmt.Fprintln(w, "error:", err)
		}
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchMIGTrigger(ctx, cancel, env, nodeagent.NewMIGManager(lib, env.node, env.node, s.EffectiveMIGStrategy()), f.migPoll)
	if err := hw.Run(ctx, 5000); err != nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		return cause
	}
	return nil
}

// startPlugins starts and registers one device plugin per advertised resource; they
// stop when ctx ends.
func startPlugins(ctx context.Context, env agentEnv, inv *nodeagent.Inventory, dir string) error {
	alloc := nodeagent.NewAllocator(inv, env.pods, "")
	for _, r := range inv.Resources() {
		srv := deviceplugin.New(r, inv, alloc, filepath.Join(dir, deviceplugin.SocketName(r)))
		if err := srv.Start(); err != nil {
			return err
		}
		go func() { <-ctx.Done(); srv.Stop() }()
		if err := srv.Register(ctx, filepath.Join(dir, filepath.Base(pluginapi.KubeletSocket))); err != nil {
			return err
		}
		fmt.Fprintf(env.w, "serving %s (%d devices)\n", r, len(inv.Devices(r)))
	}
	return nil
}

// watchMIGTrigger polls the node's MIG annotations; a layout that was applied ends the
// agent (cancel with a cause) so it restarts with the new devices.
func watchMIGTrigger(ctx context.Context, cancel context.CancelCauseFunc, env agentEnv, mgr *nodeagent.MIGManager, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := env.node.Client.CoreV1().Nodes().Get(ctx, env.node.Name, metav1.GetOptions{})
		if err != nil {
			fmt.Fprintln(env.w, "error: reading node:", err)
			continue
		}
		st, ran, err := mgr.Reconcile(ctx, n.Annotations)
		if err != nil {
			fmt.Fprintln(env.w, "error:", err)
		}
		if ran {
			fmt.Fprintf(env.w, "MIG layout: %s\n", st.Annotation())
		}
		if ran && st.State == nodeagent.MIGApplied {
			cancel(fmt.Errorf("MIG layout %s applied: restarting to advertise the new devices", st.Layout))
			return
		}
	}
}

// noGPUPods is the pod counter of --dry-run and of a node agent without API access.
type noGPUPods struct{}

func (noGPUPods) GPUPods(context.Context) (int, error) { return 0, nil }

// logUpdater prints what would be written to the Node.
type logUpdater struct{ w io.Writer }

func (l *logUpdater) SetLabels(_ context.Context, labels map[string]string) error {
	for _, k := range nodeagent.SortedLabelKeys(labels) {
		fmt.Fprintf(l.w, "node label %s=%s\n", k, labels[k])
	}
	return nil
}

func (l *logUpdater) SetMIGStatus(_ context.Context, st nodeagent.MIGStatus) error {
	fmt.Fprintf(l.w, "node annotation %s=%s\n", nodeagent.AnnotationMIGState, st.Annotation())
	return nil
}

func (l *logUpdater) SetUnhealthyDevices(_ context.Context, ids []string) error {
	fmt.Fprintf(l.w, "unhealthy devices: %s\n", strings.Join(ids, ","))
	return nil
}

// printDiscovery writes the dry-run report.
func printDiscovery(w io.Writer, d *nodeagent.Discovery, inv *nodeagent.Inventory, labels map[string]string) error {
	fmt.Fprintf(w, "driver %s, CUDA %d.%d\n", d.DriverVersion, d.CUDAMajor, d.CUDAMinor)
	fmt.Fprintf(w, "model %s (%s, %d MiB, MIG capable: %t), %d GPUs\n", d.Model.ID, d.Model.Family, d.Model.Memory, d.MIGCapable, len(d.GPUs))
	fmt.Fprintln(w, "GPU  UUID                                      BUS           NVLINK  PCIE  MIG")
	for _, g := range d.GPUs {
		mig := "disabled"
		if g.MIGEnabled {
			mig = fmt.Sprint(g.Instances)
		}
		fmt.Fprintf(w, "%-4d %-41s %-13s %-7d %-5d %s\n", g.Index, g.UUID, g.BusID, g.NVLinkDomain, g.PCIeSwitch, mig)
	}
	fmt.Fprintln(w, "device plugin resources:")
	for _, r := range inv.Resources() {
		devs := inv.Devices(r)
		ids := make([]string, len(devs))
		for i, dv := range devs {
			ids[i] = dv.ID
		}
		fmt.Fprintf(w, "  %s: %d [%s]\n", r, len(devs), strings.Join(ids, " "))
	}
	fmt.Fprintln(w, "node labels:")
	for _, k := range nodeagent.SortedLabelKeys(labels) {
		fmt.Fprintf(w, "  %s=%s\n", k, labels[k])
	}
	return nil
}
