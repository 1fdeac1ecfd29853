package draplugin_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"
	"k8s.io/dynamic-resource-allocation/resourceslice"
	"k8s.io/utils/ptr"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/draplugin"
)

const nodeName = "gpu-node-1"

// recorder is a Publisher that keeps what it was last given.
type recorder struct {
	calls int
	last  resourceslice.DriverResources
}

func (r *recorder) PublishResources(_ context.Context, res resourceslice.DriverResources) error {
	r.calls++
	r.last = res
	return nil
}

// names are the published device names of the node's pool.
func (r *recorder) names() []string {
	var out []string
	for _, s := range r.last.Pools[nodeName].Slices {
		for _, d := range s.Devices {
			out = append(out, d.Name)
		}
	}
	return out
}

// plugin is a driver over a mock node, its directories in a temp dir.
type plugin struct {
	*draplugin.Driver
	cfg  draplugin.Config
	node draplugin.Node
	pub  *recorder
}

func newPlugin(t *testing.T, d *nodeagent.Discovery) *plugin {
	t.Helper()
	dir := t.TempDir()
	cfg := draplugin.Config{PluginDir: filepath.Join(dir, "plugin"), CDIDir: filepath.Join(dir, "cdi")}
	return startPlugin(t, cfg, draplugin.NodeFromDiscovery(nodeName, d, nil))
}

// startPlugin builds a driver on cfg's directories, as a (re)started agent does.
func startPlugin(t *testing.T, cfg draplugin.Config, n draplugin.Node) *plugin {
	t.Helper()
	drv, err := draplugin.New(cfg, n)
	if err != nil {
		t.Fatal(err)
	}
	p := &plugin{Driver: drv, cfg: cfg, node: n, pub: &recorder{}}
	if err := drv.SetPublisher(context.Background(), p.pub); err != nil {
		t.Fatal(err)
	}
	return p
}

// claim is an allocated claim: each device as request:device (pool: the node).
func claim(uid, name string, devs ...string) *resourcev1.ResourceClaim {
	c := &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: name, UID: types.UID(uid)}}
	c.Status.Allocation = &resourcev1.AllocationResult{}
	for _, rd := range devs {
		req, dev, _ := strings.Cut(rd, ":")
		c.Status.Allocation.Devices.Results = append(c.Status.Allocation.Devices.Results,
			resourcev1.DeviceRequestAllocationResult{Request: req, Driver: dra.DriverName, Pool: nodeName, Device: dev})
	}
	return c
}

func (p *plugin) prepare(t *testing.T, c *resourcev1.ResourceClaim) kubeletplugin.PrepareResult {
	t.Helper()
	res, err := p.PrepareResourceClaims(context.Background(), []*resourcev1.ResourceClaim{c})
	if err != nil {
		t.Fatal(err)
	}
	return res[c.UID]
}

func (p *plugin) unprepare(t *testing.T, uid string) error {
	t.Helper()
	res, err := p.UnprepareResourceClaims(context.Background(), []kubeletplugin.NamespacedObject{{UID: types.UID(uid),
		NamespacedName: types.NamespacedName{Namespace: "team-a", Name: "c"}}})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res[types.UID(uid)]; !ok {
		t.Fatalf("no result for claim %s", uid)
	}
	return res[types.UID(uid)]
}

// spec reads a claim's CDI spec: device name -> env.
func (p *plugin) spec(t *testing.T, uid string) (map[string][]string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(p.cfg.CDIDir, "gantry.dev-claim_"+uid+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Version string `json:"cdiVersion"`
		Kind    string `json:"kind"`
		Devices []struct {
			Name           string `json:"name"`
			ContainerEdits struct {
				Env []string `json:"env"`
			} `json:"containerEdits"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatal(err)
	}
	if s.Kind != "gantry.dev/claim" || s.Version == "" {
		t.Errorf("spec kind %q version %q", s.Kind, s.Version)
	}
	out := map[string][]string{}
	for _, d := range s.Devices {
		out[d.Name] = d.ContainerEdits.Env
	}
	return out, true
}

func TestPublishesTheDiscoveredNode(t *testing.T) {
	whole := mocknode.MakeNode(t).Discover()
	p := newPlugin(t, whole)
	if got := p.pub.names(); !reflect.DeepEqual(got, []string{"gpu-0", "gpu-1", "gpu-2", "gpu-3", "gpu-4", "gpu-5", "gpu-6", "gpu-7"}) {
		t.Errorf("published %v, want gpu-0..gpu-7", got)
	}
	dev := p.pub.last.Pools[nodeName].Slices[0].Devices[3]
	if got := *dev.Attributes[dra.AttrUUID].StringValue; got != whole.GPUs[3].UUID {
		t.Errorf("gpu-3 uuid %s, want %s", got, whole.GPUs[3].UUID)
	}
	if dev.Attributes[dra.AttrDriverVersion].VersionValue == nil || *dev.Attributes[dra.AttrPCIeBusID].StringValue != whole.GPUs[3].BusID {
		t.Errorf("gpu-3 lacks the host facts: %v", dev.Attributes)
	}

	migNode := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Discover()
	p = newPlugin(t, migNode)
	names := p.pub.names()
	if len(names) != 32 || names[0] != "gpu-0-mig-2g10gb-14-0" {
		t.Fatalf("published %d devices starting %v, want 32 MIG devices starting gpu-0-mig-2g10gb-14-0", len(names), names[:1])
	}
	first := p.pub.last.Pools[nodeName].Slices[0].Devices[0]
	if got, want := *first.Attributes[dra.AttrUUID].StringValue, migNode.GPUs[0].MIG[0].UUID; got != want {
		t.Errorf("%s uuid %s, want the MIG device's %s", first.Name, got, want)
	}
}

func TestPrepareAndUnprepare(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	p := newPlugin(t, d)
	c := claim("uid-1", "train", "gpus:gpu-1", "gpus:gpu-2", "probe:gpu-5")
	res := p.prepare(t, c)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := []kubeletplugin.Device{
		{Requests: []string{"gpus"}, PoolName: nodeName, DeviceName: "gpu-1", CDIDeviceIDs: []string{"gantry.dev/claim=uid-1-gpus"}},
		{Requests: []string{"gpus"}, PoolName: nodeName, DeviceName: "gpu-2", CDIDeviceIDs: []string{"gantry.dev/claim=uid-1-gpus"}},
		{Requests: []string{"probe"}, PoolName: nodeName, DeviceName: "gpu-5", CDIDeviceIDs: []string{"gantry.dev/claim=uid-1-probe"}},
	}
	if !reflect.DeepEqual(res.Devices, want) {
		t.Errorf("devices %+v\nwant %+v", res.Devices, want)
	}
	spec, ok := p.spec(t, "uid-1")
	wantSpec := map[string][]string{
		"uid-1-gpus":  {"NVIDIA_VISIBLE_DEVICES=" + d.GPUs[1].UUID + "," + d.GPUs[2].UUID},
		"uid-1-probe": {"NVIDIA_VISIBLE_DEVICES=" + d.GPUs[5].UUID},
	}
	if !ok || !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("CDI spec %v, want %v", spec, wantSpec)
	}
	// Repeated (a kubelet restart): the same answer, the lost spec written again.
	if err := os.Remove(filepath.Join(p.cfg.CDIDir, "gantry.dev-claim_uid-1.json")); err != nil {
		t.Fatal(err)
	}
	if again := p.prepare(t, c); again.Err != nil || !reflect.DeepEqual(again.Devices, want) {
		t.Errorf("second prepare %+v, want the first answer", again)
	}
	if spec, _ := p.spec(t, "uid-1"); !reflect.DeepEqual(spec, wantSpec) {
		t.Errorf("spec after the second prepare %v", spec)
	}
	for i := 0; i < 2; i++ {
		if err := p.unprepare(t, "uid-1"); err != nil {
			t.Fatalf("unprepare %d: %v", i+1, err)
		}
		if _, ok := p.spec(t, "uid-1"); ok {
			t.Fatalf("unprepare %d left the CDI spec", i+1)
		}
	}
	// The devices are free again.
	if res := p.prepare(t, claim("uid-2", "next", "gpus:gpu-1")); res.Err != nil {
		t.Errorf("gpu-1 after unprepare: %v", res.Err)
	}
}

func TestPrepareMIGDevices(t *testing.T) {
	d := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Discover()
	p := newPlugin(t, d)
	res := p.prepare(t, claim("uid-m", "infer", "mig:gpu-3-mig-3g20gb-9-4"))
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	var uuid string
	for _, m := range d.GPUs[3].MIG {
		if m.Instance == (devices.Instance{Profile: "3g.20gb", Start: 4}) {
			uuid = m.UUID
		}
	}
	if spec, _ := p.spec(t, "uid-m"); !reflect.DeepEqual(spec["uid-m-mig"], []string{"NVIDIA_VISIBLE_DEVICES=" + uuid}) || uuid == "" {
		t.Errorf("spec %v, want the MIG device's UUID %q", spec, uuid)
	}
}

func TestPrepareRefuses(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	otherPool := claim("uid-o", "elsewhere", "gpus:gpu-1")
	otherPool.Status.Allocation.Devices.Results[0].Pool = "gpu-node-2"
	admin := claim("uid-a", "monitor", "watch:gpu-0")
	admin.Status.Allocation.Devices.Results[0].AdminAccess = ptr.To(true)
	cases := []struct {
		name  string
		claim *resourcev1.ResourceClaim
		want  string // "" succeeds
		devs  int
	}{
		{"a device of another node's pool is not ours to prepare", otherPool, "", 0},
		{"a device the node lacks", claim("uid-x", "x", "gpus:gpu-9"), "device gpu-9 is not a device of node gpu-node-1", 0},
		{"a device prepared for another claim", claim("uid-d", "dup", "gpus:gpu-0"), "device gpu-0 is prepared for claim team-a/first (uid-first)", 0},
		{"a device taken out as unhealthy", claim("uid-u", "u", "gpus:gpu-6"), "device gpu-6 is unhealthy: XID 79", 0},
		{"admin access shares a device", admin, "", 1},
		{"not allocated", &resourcev1.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "n", UID: "uid-n"}}, "not allocated", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, d)
			if res := p.prepare(t, claim("uid-first", "first", "gpus:gpu-0")); res.Err != nil {
				t.Fatal(res.Err)
			}
			if err := p.MarkUnhealthy(context.Background(), nodeagent.HealthEvent{GPU: 6, IDs: []string{"GPU-6"}, Reason: "XID 79"}); err != nil {
				t.Fatal(err)
			}
			res := p.prepare(t, tc.claim)
			switch {
			case tc.want == "" && res.Err != nil:
				t.Errorf("error %v, want success", res.Err)
			case tc.want != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tc.want)):
				t.Errorf("error %v, want %q", res.Err, tc.want)
			case len(res.Devices) != tc.devs:
				t.Errorf("devices %+v, want %d", res.Devices, tc.devs)
			}
			if _, written := p.spec(t, string(tc.claim.UID)); written != (tc.devs > 0) {
				t.Errorf("CDI spec written: %v, want %v", written, tc.devs > 0)
			}
		})
	}
}

// TestPreparedClaimsSurviveARestart: a restarted plugin knows what the last run
// prepared: it refuses those devices to other claims, answers a repeated prepare the
// same, and unprepares the claim (the kubelet then sends only its UID).
func TestPreparedClaimsSurviveARestart(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	first := newPlugin(t, d)
	c := claim("uid-r", "resumed", "gpus:gpu-4")
	before := first.prepare(t, c)
	if before.Err != nil {
		t.Fatal(before.Err)
	}
	second := startPlugin(t, first.cfg, first.node)
	if res := second.prepare(t, claim("uid-s", "second", "gpus:gpu-4")); res.Err == nil || !strings.Contains(res.Err.Error(), "prepared for claim team-a/resumed") {
		t.Errorf("gpu-4 handed to a second claim after a restart: %+v", res)
	}
	if again := second.prepare(t, c); again.Err != nil || !reflect.DeepEqual(again.Devices, before.Devices) {
		t.Errorf("repeated prepare after a restart %+v, want %+v", again, before)
	}
	if err := second.unprepare(t, "uid-r"); err != nil {
		t.Fatal(err)
	}
	if _, ok := second.spec(t, "uid-r"); ok {
		t.Error("the CDI spec outlived unprepare after a restart")
	}
	third := startPlugin(t, first.cfg, first.node)
	if res := third.prepare(t, claim("uid-s", "second", "gpus:gpu-4")); res.Err != nil {
		t.Errorf("gpu-4 after the unprepare survived a restart: %v", res.Err)
	}
}

func TestCorruptCheckpointIsRefused(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	dir := t.TempDir()
	cfg := draplugin.Config{PluginDir: dir, CDIDir: filepath.Join(dir, "cdi")}
	for _, content := range []string{"{not json", `{"version": 7, "claims": {}}`} {
		if err := os.WriteFile(filepath.Join(dir, "checkpoint.json"), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := draplugin.New(cfg, draplugin.NodeFromDiscovery(nodeName, d, nil))
		if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "checkpoint.json")) {
			t.Errorf("checkpoint %q: error %v, want one naming the file", content, err)
		}
	}
}

func TestUnhealthyDevicesLeaveThePool(t *testing.T) {
	d := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Discover()
	cases := []struct {
		name string
		ev   nodeagent.HealthEvent
		gone []string
	}{
		{"a MIG device", nodeagent.HealthEvent{GPU: 2, IDs: []string{"GPU-2/mig-3g.20gb@4"}, Reason: "XID 94"},
			[]string{"gpu-2-mig-3g20gb-9-4"}},
		{"a whole GPU's MIG devices", nodeagent.HealthEvent{GPU: 1, IDs: []string{"GPU-1/mig-2g.10gb@0", "GPU-1/mig-1g.5gb@2",
			"GPU-1/mig-1g.5gb@3", "GPU-1/mig-3g.20gb@4"}, Reason: "XID 79"},
			[]string{"gpu-1-mig-1g5gb-19-2", "gpu-1-mig-1g5gb-19-3", "gpu-1-mig-2g10gb-14-0", "gpu-1-mig-3g20gb-9-4"}},
		{"an event naming only the GPU", nodeagent.HealthEvent{GPU: 0, Reason: "lost"},
			[]string{"gpu-0-mig-1g5gb-19-2", "gpu-0-mig-1g5gb-19-3", "gpu-0-mig-2g10gb-14-0", "gpu-0-mig-3g20gb-9-4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlugin(t, d)
			if err := p.MarkUnhealthy(context.Background(), tc.ev); err != nil {
				t.Fatal(err)
			}
			if got := p.Unhealthy(); !reflect.DeepEqual(got, tc.gone) {
				t.Errorf("unhealthy %v, want %v", got, tc.gone)
			}
			published := map[string]bool{}
			for _, n := range p.pub.names() {
				published[n] = true
			}
			for _, n := range tc.gone {
				if published[n] {
					t.Errorf("%s still published", n)
				}
			}
			if len(published) != 32-len(tc.gone) || p.pub.calls != 2 {
				t.Errorf("%d devices published in %d calls, want %d after one republish", len(published), p.pub.calls, 32-len(tc.gone))
			}
		})
	}
}

// TestHealthWatcherRepublishes drives the agent's own health watcher: a GPU whose
// events cannot be registered is marked at once, and its device leaves the pool; the
// device plugin path's sink still hears of it.
func TestHealthWatcherRepublishes(t *testing.T) {
	b := mocknode.MakeNode(t)
	b.Server().RefuseEventRegistration(6)
	d, inv := b.Inventory()
	p := newPlugin(t, d)
	var next []nodeagent.HealthEvent
	sink := p.HealthSink(context.Background(), func(ev nodeagent.HealthEvent) { next = append(next, ev) })
	if _, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, nodeagent.HealthChecks{}, sink); err != nil {
		t.Fatal(err)
	}
	if got := p.Unhealthy(); !reflect.DeepEqual(got, []string{"gpu-6"}) {
		t.Errorf("unhealthy %v, want [gpu-6]", got)
	}
	if got := fmt.Sprint(p.pub.names()); strings.Contains(got, "gpu-6") {
		t.Errorf("published %s, want gpu-6 gone", got)
	}
	if len(next) != 1 || next[0].GPU != 6 {
		t.Errorf("the next sink heard %+v, want GPU 6's event", next)
	}
}

// A time-sliced GPU's replicas are one DRA device: a replica's health event takes the
// whole GPU out of the pool.
func TestUnhealthyReplicaTakesItsGPU(t *testing.T) {
	d := mocknode.MakeNode(t).Sharing(devices.Sharing{Mode: devices.TimeSlicing, Replicas: 4}).Discover()
	p := newPlugin(t, d)
	ev := nodeagent.HealthEvent{GPU: 2, IDs: []string{"GPU-2/replica-0", "GPU-2/replica-3"}, Reason: "XID 79"}
	if err := p.MarkUnhealthy(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if got := p.Unhealthy(); !reflect.DeepEqual(got, []string{"gpu-2"}) {
		t.Errorf("unhealthy %v, want [gpu-2]", got)
	}
	if got := len(p.pub.names()); got != 7 {
		t.Errorf("%d devices published, want 7", got)
	}
}
