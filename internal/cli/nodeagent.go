//go:build cgo

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
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	podresourcesv1 "k8s.io/kubelet/pkg/apis/podresources/v1"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/deviceplugin"
	"github.com/gantry-sched/gantry/pkg/nodeagent/kubenode"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migparted"
	"github.com/gantry-sched/gantry/pkg/nodeagent/migprotocol"
	"github.com/gantry-sched/gantry/pkg/nodeagent/pluginconfig"
)

// nodeAgentFlags are the node agent's settings, read once.
type nodeAgentFlags struct {
	dryRun          bool
	mock            string
	nvmlLibrary     string
	mode            string
	replicas        int
	renameByDefault bool
	migStrategy     string
	migConfig       string
	migConfigFile   string
	migPassive      bool
	kubeletDir      string
	nodeName        string
	kubeconfig      string
	podResources    string
	migPoll         time.Duration
	failMulti       bool
	pluginConfig    string
	rebootCommand   []string
	machineFile     string
	metricsAddr     string
	output          *outputFormat
	// DRA: serve the DRA kubelet plugin (gpu.nvidia.com), beside the device plugin or,
	// with devicePlugin off, instead of it.
	dra          bool
	devicePlugin bool
	draRegistrar string
	draPluginDir string
	cdiDir       string
}

// newNodeAgentCommand builds `gantry node-agent`: GPU discovery, labels, device plugin,
// MIG layouts and health on one node.
func newNodeAgentCommand() *cobra.Command {
	var f nodeAgentFlags
	cmd := &cobra.Command{
		Use:   "node-agent [--dry-run] [--mock dgx-a100|dgx-h100|dgx-h200|dgx-b200]",
		Short: "Discover the node's GPUs, label the node and serve the kubelet device plugin",
		Long: "node-agent reads the GPUs through NVML (libnvidia-ml, loaded at run time; or, with --mock,\n" +
			"one of go-nvml's simulated DGX machines), prints the device model and the node labels it\n" +
			"would apply (--dry-run), or serves the kubelet device plugin, watches GPU health and runs the\n" +
			"MIG manager until stopped. --mig-config applies a config of the mig-parted file first (only\n" +
			"to a mock, with --dry-run). " + nodeagent.EnvDisableHealthChecks + " switches health checks off\n" +
			"(all, xids) or ignores more XIDs (a comma list), as for NVIDIA's device plugin.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNodeAgent(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.dryRun, "dry-run", false, "print the discovered model, devices and labels, and exit")
	fl.StringVar(&f.mock, "mock", "", "use a simulated node instead of NVML: "+strings.Join(nvmlmock.Machines(), ", "))
	fl.StringVar(&f.nvmlLibrary, "nvml-library", "", "path of libnvidia-ml (default: libnvidia-ml.so.1 from the library path)")
	fl.StringVar(&f.mode, "sharing", "exclusive", "GPU sharing: exclusive, mig, time-slicing, mps or fractional")
	fl.IntVar(&f.replicas, "replicas", 0, "replicas per GPU for time-slicing and mps")
	fl.BoolVar(&f.renameByDefault, "rename-by-default", false, "advertise replicas as nvidia.com/gpu.shared")
	fl.StringVar(&f.migStrategy, "mig-strategy", "single", "MIG strategy: single or mixed")
	fl.StringVar(&f.migConfig, "mig-config", "", "with --dry-run: a config of the mig-parted file to apply to the mock first (all-1g.5gb, all-balanced, ...)")
	fl.StringVar(&f.migConfigFile, "mig-config-file", "", "mig-parted config file (version v1, mig-configs); default: mig-parted's default configs")
	fl.BoolVar(&f.migPassive, "mig-passive", false, "leave MIG changes to NVIDIA's MIG manager: only read "+migprotocol.LabelConfig)
	fl.StringVar(&f.kubeletDir, "kubelet-dir", pluginapi.DevicePluginPath, "the kubelet's device-plugin directory")
	fl.StringVar(&f.nodeName, "node-name", os.Getenv("NODE_NAME"), "this node's name (default $NODE_NAME)")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig file; empty: in-cluster config")
	fl.StringVar(&f.podResources, "pod-resources-socket", "/var/lib/kubelet/pod-resources/kubelet.sock", "the kubelet's pod-resources socket")
	fl.BoolVar(&f.failMulti, "fail-requests-greater-than-one", false, "time-slicing: refuse a container asking for more than one replica (MPS always does)")
	fl.StringVar(&f.pluginConfig, "config", os.Getenv("CONFIG_FILE"), "NVIDIA device-plugin config file (version v1: flags.migStrategy, sharing.timeSlicing / sharing.mps); it replaces --sharing, --replicas, --rename-by-default and --fail-requests-greater-than-one (default $CONFIG_FILE)")
	fl.StringSliceVar(&f.rebootCommand, "mig-reboot-command", nil, "command that reboots the node when a MIG mode change needs a GPU reset (e.g. chroot,/host,systemctl,reboot); unset: such a change fails with the reason")
	f.output = addOutputFlag(cmd)
	fl.StringVar(&f.machineFile, "machine-type-file", "/sys/class/dmi/id/product_name", "file naming the machine type, for the nvidia.com/gpu.machine label (GFD's default)")
	fl.DurationVar(&f.migPoll, "mig-poll", 30*time.Second, "how often to check the node's "+migprotocol.LabelConfig+" label")
	fl.StringVar(&f.metricsAddr, "metrics-bind-address", ":9401", "address serving Prometheus /metrics (\"0\" disables)")
	addDRAFlags(cmd, &f)
	return cmd
}

// sharing is the sharing config of the flags, or of NVIDIA's device-plugin config file
// when one is given (its warnings go to w); validated against nothing yet (discovery
// does).
func (f nodeAgentFlags) sharing(w io.Writer) (devices.Sharing, error) {
	s := devices.Sharing{
		Mode: devices.SharingMode(strings.ToLower(f.mode)), Replicas: f.replicas,
		RenameByDefault: f.renameByDefault, MIGStrategy: devices.MIGStrategy(strings.ToLower(f.migStrategy)),
		FailRequestsGreaterThanOne: f.failMulti,
	}
	if f.pluginConfig != "" {
		c, err := pluginconfig.Load(f.pluginConfig)
		if err != nil {
			return s, err
		}
		for _, warn := range c.Warnings {
			fmt.Fprintln(w, "warning: "+warn)
		}
		strategy := s.MIGStrategy
		s = c.Sharing
		if !c.MIGStrategySet || s.MIGStrategy == "" {
			s.MIGStrategy = strategy
		}
	}
	switch s.Mode {
	case devices.Exclusive, devices.MIG, devices.TimeSlicing, devices.MPS, devices.Fractional:
	default:
		return s, fmt.Errorf("--sharing %q: want exclusive, mig, time-slicing, mps or fractional", f.mode)
	}
	if s.MIGStrategy != devices.MIGSingle && s.MIGStrategy != devices.MIGMixed {
		return s, fmt.Errorf("--mig-strategy %q: want single or mixed", f.migStrategy)
	}
	if f.migConfig != "" {
		s.Mode = devices.MIG
	}
	return s, nil
}

// machineType is the DMI product name, as GPU Feature Discovery reads it; a mock is a
// DGX of its kind, and an unreadable file leaves the label "unknown", as GFD does.
func machineType(file, mock string) string {
	if mock != "" {
		return "NVIDIA DGX " + strings.ToUpper(strings.TrimPrefix(mock, "dgx-"))
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// rebooter is the MIG manager's reboot hook: none unless a command is given.
func rebooter(argv []string) nodeagent.Rebooter {
	if len(argv) == 0 {
		return nil
	}
	return nodeagent.CommandRebooter{Argv: argv}
}

// openNVML returns the mock or the real library (go-nvml's dlopen loader), initialised.
func openNVML(f nodeAgentFlags) (nvml.Interface, error) {
	var lib nvml.Interface
	library := "libnvidia-ml.so.1"
	switch {
	case f.mock != "":
		m, err := nvmlmock.New(f.mock)
		if err != nil {
			return nil, fmt.Errorf("--mock: %w", err)
		}
		lib, library = m, "mock "+f.mock
	case f.nvmlLibrary != "":
		lib, library = nvml.New(nvml.WithLibraryPath(f.nvmlLibrary)), f.nvmlLibrary
	default:
		lib = nvml.New()
	}
	if r := lib.Init(); r != nvml.SUCCESS {
		return nil, fmt.Errorf("initialising NVML (%s): %w", library, r)
	}
	return lib, nil
}

func runNodeAgent(cmd *cobra.Command, f nodeAgentFlags) error {
	s, err := f.sharing(cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	if !f.dra && !f.devicePlugin {
		return fmt.Errorf("--device-plugin=false needs --dra: the agent would hand the GPUs to no pod")
	}
	if !f.dryRun && (f.mock != "" || f.migConfig != "") {
		return fmt.Errorf("--mock and --mig-config need --dry-run: a simulated node cannot serve a real kubelet, and a real node's MIG config comes from its %s label", migprotocol.LabelConfig)
	}
	// Read once, at the edge, as NVIDIA's device plugin reads it at start-up.
	checks, err := nodeagent.ParseHealthChecks(os.Getenv(nodeagent.EnvDisableHealthChecks))
	if err != nil {
		return err
	}
	spec, err := migparted.LoadOrDefault(f.migConfigFile)
	if err != nil {
		return err
	}
	lib, err := openNVML(f)
	if err != nil {
		return err
	}
	defer lib.Shutdown()
	ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	p := agentParts{lib: lib, sharing: s, checks: checks, spec: spec}
	if f.dryRun {
		return dryRunNodeAgent(cmd, f, p)
	}
	env, closeEnv, err := connect(cmd.ErrOrStderr(), f)
	if err != nil {
		return err
	}
	defer closeEnv()
	meta, err := env.node.ReadNode(ctx)
	if err != nil {
		return fmt.Errorf("reading node %s: %w", f.nodeName, err)
	}
	if err := p.discover(env.w, f, startSharing(env.w, s, meta.Labels, f.dra)); err != nil {
		return err
	}
	return serveNodeAgent(ctx, env, f, p)
}

// dryRunNodeAgent applies --mig-config to the mock (its sharing following the config:
// all-dynamic needs --dra) and prints what the agent would advertise.
func dryRunNodeAgent(cmd *cobra.Command, f nodeAgentFlags, p agentParts) error {
	s, err := configuredSharing(p.sharing, f.migConfig, f.dra)
	if err != nil {
		return fmt.Errorf("--mig-config: %w", err)
	}
	if f.migConfig != "" {
		if f.mock == "" {
			return fmt.Errorf("--mig-config applies only to a --mock machine")
		}
		if err := nodeagent.ApplyMIGConfig(p.lib, p.spec, f.migConfig); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "MIG config %s applied\n", f.migConfig)
	}
	if err := p.discover(cmd.ErrOrStderr(), f, s); err != nil {
		return err
	}
	return printDryRun(cmd.OutOrStdout(), f, p.d, p.inv, nodeagent.Labels(p.d, p.sharing))
}

// discover reads the GPUs under sharing s (the flags' p.sharing where the node has no
// MIG GPU to carve) and builds the inventory, setting p's d, inv and sharing.
func (p *agentParts) discover(w io.Writer, f nodeAgentFlags, s devices.Sharing) error {
	d, s, err := discoverNode(w, p.lib, s, p.sharing)
	if err != nil {
		return err
	}
	d.Facts.MachineType = machineType(f.machineFile, f.mock)
	inv, err := nodeagent.NewInventory(d, s)
	if err != nil {
		return err
	}
	p.d, p.inv, p.sharing = d, inv, s
	return nil
}

// agentParts are what the serving agent runs on.
type agentParts struct {
	lib     nvml.Interface
	d       *nodeagent.Discovery
	inv     *nodeagent.Inventory
	sharing devices.Sharing
	checks  nodeagent.HealthChecks
	spec    *migparted.Spec
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

// serveNodeAgent labels the node, runs the device plugins (re-registering whenever the
// kubelet restarts), the health loop and the MIG manager until ctx ends. After a MIG
// change it returns an error, so the DaemonSet restarts the agent and it advertises the
// new devices.
func serveNodeAgent(ctx context.Context, env agentEnv, f nodeAgentFlags, p agentParts) error {
	w := env.w
	metrics, err := startAgentMetrics(ctx, w, f, p)
	if err != nil {
		return err
	}
	if err := env.node.SetLabels(ctx, nodeagent.Labels(p.d, p.sharing)); err != nil {
		return err
	}
	if err := env.node.SetReplicatedDevices(ctx, p.inv.ReplicatedDevices()); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	sink := metrics.HealthSink(func(ev nodeagent.HealthEvent) {
		fmt.Fprintf(w, "unhealthy: %s (%s)\n", strings.Join(ev.IDs, ","), ev.Reason)
		if err := env.node.SetUnhealthyDevices(ctx, p.inv.Unhealthy()); err != nil {
			fmt.Fprintln(w, "error:", err)
		}
	})
	if f.dra {
		stopDRA, draSink, err := startDRAPlugin(ctx, cancel, env, f, p, sink)
		if err != nil {
			return err
		}
		defer stopDRA()
		sink = draSink
	}
	hw, err := nodeagent.NewHealthWatcher(p.lib, p.d, p.inv, p.checks, sink)
	if err != nil {
		return err
	}
	if f.devicePlugin {
		go runPlugins(ctx, env, p.inv, f.kubeletDir, metrics)
	}
	mgr := nodeagent.NewMIGManager(p.lib, env.node, env.node, nodeagent.MIGOptions{
		Load: func() (*migparted.Spec, error) { return migparted.LoadOrDefault(f.migConfigFile) }, Passive: f.migPassive, Reboot: rebooter(f.rebootCommand),
		DRA: f.dra, Carving: p.sharing.DynamicMIG()})
	go watchMIGConfig(ctx, cancel, env.w, mgr, f.migPoll, metrics, func(config string) bool {
		return restartNeeded(p.lib, p.d, p.sharing, config, f.dra)
	})
	if err := hw.Run(ctx, 5000); err != nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		return cause
	}
	return nil
}

// startAgentMetrics registers the agent's series (with Go's and the process's) and
// serves them on --metrics-bind-address until ctx ends; "0" serves nothing (the series
// are still counted). A port in use fails the agent at start.
func startAgentMetrics(ctx context.Context, w io.Writer, f nodeAgentFlags, p agentParts) (*nodeagent.AgentMetrics, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m, err := nodeagent.NewAgentMetrics(reg, nodeagent.AgentInfo{Node: f.nodeName, Version: Version, Driver: p.d.DriverVersion}, p.d, p.inv)
	if err != nil {
		return nil, err
	}
	if f.metricsAddr == "0" {
		return m, nil
	}
	srv, err := nodeagent.ListenMetrics(f.metricsAddr, reg)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(w, "serving metrics on %s\n", srv.Addr())
	go func() {
		if err := srv.Serve(ctx); err != nil {
			fmt.Fprintln(w, "error:", err)
		}
	}()
	return m, nil
}

// runPlugins serves one device plugin per advertised resource and keeps them registered
// with the kubelet (again after each kubelet restart) until ctx ends.
func runPlugins(ctx context.Context, env agentEnv, inv *nodeagent.Inventory, dir string, metrics *nodeagent.AgentMetrics) {
	alloc := nodeagent.NewAllocator(inv, env.pods, "")
	var servers []*deviceplugin.Server
	for _, r := range inv.Resources() {
		servers = append(servers, deviceplugin.New(r, inv, alloc, filepath.Join(dir, deviceplugin.SocketName(r))))
	}
	reg := deviceplugin.NewRegistrar(servers, filepath.Join(dir, filepath.Base(pluginapi.KubeletSocket)), 0,
		func(err error) {
			metrics.PluginRegistrationFailed()
			fmt.Fprintln(env.w, "error: device plugin:", err)
		})
	reg.Run(ctx, func() {
		metrics.PluginsRegistered()
		for _, r := range inv.Resources() {
			fmt.Fprintf(env.w, "serving %s (%d devices)\n", r, len(inv.Devices(r)))
		}
	})
}

// watchMIGConfig reconciles the node's MIG config every poll; once a config is in place
// and the agent no longer advertises what it should under it (changed), it ends the
// agent (cancel with a cause) so it restarts with the new devices.
func watchMIGConfig(ctx context.Context, cancel context.CancelCauseFunc, w io.Writer, mgr *nodeagent.MIGManager, every time.Duration, metrics *nodeagent.AgentMetrics, changed func(config string) bool) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st, err := mgr.Reconcile(ctx)
		if err != nil {
			fmt.Fprintln(w, "error: MIG manager:", err)
			continue
		}
		metrics.MIGState(st)
		if a := st.Annotation(); st.Config != "" && a != last {
			fmt.Fprintf(w, "MIG config: %s\n", a)
			last = a
		}
		if st.State == migprotocol.Success && changed(st.Config) {
			cancel(fmt.Errorf("MIG config %s applied: restarting to advertise the new devices", st.Config))
			return
		}
	}
}

// printDiscovery writes the dry-run report.
// dryRun is what `node-agent --dry-run -o json|yaml` prints: the text view's facts.
type dryRun struct {
	Driver      string              `json:"driver"`
	CUDA        string              `json:"cuda"`
	Model       devices.ModelID     `json:"model"`
	Product     string              `json:"product"`
	GPUs        []dryRunGPU         `json:"gpus"`
	Resources   map[string][]string `json:"resources"`
	Labels      map[string]string   `json:"labels"`
	Annotations map[string]string   `json:"annotations,omitempty"`
	// DRADevices are the devices the DRA plugin publishes (with --dra).
	DRADevices []dryRunDRADevice `json:"draDevices,omitempty"`
}

type dryRunGPU struct {
	Index        int                `json:"index"`
	UUID         string             `json:"uuid"`
	BusID        string             `json:"busID"`
	MemoryMiB    int64              `json:"memoryMiB"`
	NVLinkDomain int                `json:"nvlinkDomain"`
	PCIeSwitch   int                `json:"pcieSwitch"`
	MIG          []devices.Instance `json:"mig,omitempty"`
}

func dryRunReport(d *nodeagent.Discovery, inv *nodeagent.Inventory, labels map[string]string) dryRun {
	out := dryRun{Driver: d.DriverVersion, CUDA: fmt.Sprintf("%d.%d", d.CUDAMajor, d.CUDAMinor), Model: d.Model.ID,
		Product: d.Product, Resources: map[string][]string{}, Labels: labels}
	for _, g := range d.GPUs {
		out.GPUs = append(out.GPUs, dryRunGPU{Index: g.Index, UUID: g.UUID, BusID: g.BusID, MemoryMiB: int64(g.Memory),
			NVLinkDomain: g.NVLinkDomain, PCIeSwitch: g.PCIeSwitch, MIG: g.Instances})
	}
	for _, r := range inv.Resources() {
		for _, dv := range inv.Devices(r) {
			out.Resources[string(r)] = append(out.Resources[string(r)], dv.ID)
		}
	}
	if r := inv.ReplicatedDevices(); len(r) > 0 {
		out.Annotations = map[string]string{devices.AnnotationReplicatedDevices: r.String()}
	}
	return out
}

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
	printProfiles(w, d)
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
	if r := inv.ReplicatedDevices(); len(r) > 0 {
		fmt.Fprintln(w, "node annotations:")
		fmt.Fprintf(w, "  %s=%s\n", devices.AnnotationReplicatedDevices, r)
	}
	return nil
}

// printProfiles lists the MIG profiles NVML offers on the first GPU with MIG on (NVML
// lists them only then): name, NVML memory and start slots.
func printProfiles(w io.Writer, d *nodeagent.Discovery) {
	for _, g := range d.GPUs {
		if len(g.Profiles) == 0 {
			continue
		}
		fmt.Fprintf(w, "MIG profiles of GPU %d (NVML):\n", g.Index)
		for _, p := range g.Profiles {
			starts := make([]string, len(p.Placements))
			for i, pl := range p.Placements {
				starts[i] = fmt.Sprint(pl.Start)
			}
			fmt.Fprintf(w, "  %-16s %7d MiB  starts %s\n", p.Name, p.Memory, strings.Join(starts, ","))
		}
		return
	}
}
