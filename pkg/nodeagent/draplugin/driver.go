package draplugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"k8s.io/client-go/kubernetes"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"

	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
)

// Default host paths: the kubelet's plugin registry and plugin directory, and the CDI
// directory container runtimes read (containerd and CRI-O both read /var/run/cdi).
const (
	DefaultRegistrarDir = kubeletplugin.KubeletRegistryDir
	DefaultPluginDir    = kubeletplugin.KubeletPluginsDir + "/" + dra.DriverName
	DefaultCDIDir       = "/var/run/cdi"
)

// Config says where the plugin lives on the host.
type Config struct {
	// RegistrarDir is the kubelet's plugin registry, where the registration socket goes.
	RegistrarDir string
	// PluginDir holds the DRA socket (dra.sock) and the checkpoint.
	PluginDir string
	// CDIDir is where prepared claims' CDI specs are written.
	CDIDir string
	// Log receives background errors (slice publishing, gRPC serving).
	Log io.Writer
	// OnFatal, if set, is called with an error the plugin cannot recover from; the
	// agent stops (and its DaemonSet restarts it).
	OnFatal func(error)
	// MIG creates and destroys the MIG devices of GPUs whose layout is chosen at
	// allocation time (NVMLCarver); nil: claims on their placements fail to prepare.
	MIG MIGCarver
}

// Publisher publishes a driver's ResourceSlices; kubeletplugin.Helper is one.
type Publisher interface {
	PublishResources(ctx context.Context, resources resourceslice.DriverResources) error
}

// Driver is the node agent as NVIDIA's GPU DRA driver (gpu.nvidia.com): it publishes
// the node's GPUs and MIG devices as a ResourceSlice pool named after the node, prepares
// allocated claims by writing CDI specs, and republishes without the devices that turn
// unhealthy. It implements kubeletplugin.DRAPlugin.
type Driver struct {
	cfg  Config
	node string
	inv  *dra.NodeInventory
	// nd values health events' device IDs (replicas of MIG devices) against the GPUs.
	nd   *devices.NodeDevices
	gpus []devices.GPU
	// uuids are the UUIDs of the node's devices by DRA name.
	uuids map[string]string
	// dynamic are the GPUs whose MIG layout is chosen at allocation time, by index;
	// wholeDynamic their whole devices' DRA names.
	dynamic      map[int]bool
	wholeDynamic map[string]int

	mu        sync.Mutex
	unhealthy map[string]string // DRA device name -> reason
	cp        checkpoint
	pub       Publisher
}

var _ kubeletplugin.DRAPlugin = (*Driver)(nil)

// New builds the driver for node n, reading the checkpoint an earlier run left in
// cfg.PluginDir.
func New(cfg Config, n Node) (*Driver, error) {
	if n.Name == "" {
		return nil, errors.New("DRA plugin: the node name is empty")
	}
	if cfg.PluginDir == "" || cfg.CDIDir == "" {
		return nil, errors.New("DRA plugin: the plugin and CDI directories must be set")
	}
	if cfg.Log == nil {
		cfg.Log = io.Discard
	}
	inv, err := dra.NewNodeInventory(n.Name, n.GPUs, dra.WithHostFacts(n.Facts))
	if err != nil {
		return nil, fmt.Errorf("DRA plugin: %w", err)
	}
	nd, err := devices.NewNodeDevices(n.GPUs)
	if err != nil {
		return nil, fmt.Errorf("DRA plugin: node %s: %w", n.Name, err)
	}
	if err := os.MkdirAll(cfg.PluginDir, 0o750); err != nil {
		return nil, fmt.Errorf("DRA plugin: %w", err)
	}
	cp, err := loadCheckpoint(cfg.PluginDir)
	if err != nil {
		return nil, fmt.Errorf("DRA plugin: %w", err)
	}
	d := &Driver{cfg: cfg, node: n.Name, inv: inv, nd: nd, gpus: slices.Clone(n.GPUs), uuids: deviceUUIDs(inv, n), unhealthy: map[string]string{}, cp: cp,
		dynamic: map[int]bool{}, wholeDynamic: map[string]int{}}
	for _, g := range n.GPUs {
		if g.Sharing.DynamicMIG() {
			d.dynamic[g.Index] = true
			if name, ok := inv.DeviceName(devices.GPUID(g.Index)); ok {
				d.wholeDynamic[name] = g.Index
			}
		}
	}
	for _, g := range n.GPUs {
		if !g.Healthy {
			d.markGPU(g.Index, "unhealthy at discovery")
		}
	}
	return d, nil
}

// deviceUUIDs maps each DRA device of the node to the UUID NVIDIA_VISIBLE_DEVICES takes:
// the GPU's, or the MIG device's from the host facts (none known: the device cannot be
// prepared).
func deviceUUIDs(inv *dra.NodeInventory, n Node) map[string]string {
	out := map[string]string{}
	for _, g := range n.GPUs {
		if len(g.Instances) == 0 {
			if name, ok := inv.DeviceName(devices.Device{GPU: g.Index, Kind: devices.WholeGPU}.ID()); ok && g.UUID != "" {
				out[name] = g.UUID
			}
			continue
		}
		for _, in := range g.Instances {
			name, ok := inv.DeviceName(devices.Device{GPU: g.Index, Kind: devices.MIGDevice, Instance: in}.ID())
			if uuid := n.Facts.GPUs[g.Index].MIGUUIDs[in]; ok && uuid != "" {
				out[name] = uuid
			}
		}
	}
	return out
}

// Start registers the plugin with the kubelet (the registration socket in
// cfg.RegistrarDir, the DRA service on cfg.PluginDir/dra.sock) and publishes the node's
// slices through client. Stop the returned helper to end both.
func (d *Driver) Start(ctx context.Context, client kubernetes.Interface) (*kubeletplugin.Helper, error) {
	registrar := d.cfg.RegistrarDir
	if registrar == "" {
		registrar = DefaultRegistrarDir
	}
	h, err := kubeletplugin.Start(ctx, d, kubeletplugin.DriverName(dra.DriverName), kubeletplugin.KubeClient(client),
		kubeletplugin.NodeName(d.node), kubeletplugin.RegistrarDirectoryPath(registrar),
		kubeletplugin.PluginDataDirectoryPath(d.cfg.PluginDir))
	if err != nil {
		return nil, fmt.Errorf("DRA plugin: %w", err)
	}
	if err := d.SetPublisher(ctx, h); err != nil {
		h.Stop()
		return nil, err
	}
	return h, nil
}

// SetPublisher publishes the node's slices through p, now and after every health
// change.
func (d *Driver) SetPublisher(ctx context.Context, p Publisher) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.pub = p
	return d.publishLocked(ctx)
}

// HandleError reports a background error; one the helper does not call recoverable
// ends the agent through cfg.OnFatal.
func (d *Driver) HandleError(_ context.Context, err error, msg string) {
	fmt.Fprintf(d.cfg.Log, "error: DRA plugin: %s: %v\n", msg, err)
	if !errors.Is(err, kubeletplugin.ErrRecoverable) && d.cfg.OnFatal != nil {
		d.cfg.OnFatal(fmt.Errorf("DRA plugin: %s: %w", msg, err))
	}
}
