package deviceplugin_test

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/deviceplugin"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// fakeKubelet is the kubelet's registration service on a unix socket.
type fakeKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	got chan *pluginapi.RegisterRequest
}

func (k *fakeKubelet) Register(_ context.Context, r *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	k.got <- r
	return &pluginapi.Empty{}, nil
}

func startKubelet(t *testing.T, socket string) *fakeKubelet {
	t.Helper()
	lis, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	k := &fakeKubelet{got: make(chan *pluginapi.RegisterRequest, 1)}
	srv := grpc.NewServer()
	pluginapi.RegisterRegistrationServer(srv, k)
	go srv.Serve(lis)
	t.Cleanup(srv.Stop)
	return k
}

// fakePods answers every Allocate with one pod.
type fakePods struct{ pod nodeagent.Pod }

func (f fakePods) PodForAllocate(context.Context, resources.Name, []string) (nodeagent.Pod, bool, error) {
	return f.pod, true, nil
}

// harness is a mock DGX A100 whose nvidia.com/gpu plugin is registered with a fake kubelet.
type harness struct {
	node   *mocknode.NodeWrapper
	disc   *nodeagent.Discovery
	inv    *nodeagent.Inventory
	client pluginapi.DevicePluginClient
	reg    *pluginapi.RegisterRequest
}

func newHarness(t *testing.T, pod nodeagent.Pod) *harness {
	t.Helper()
	dir := t.TempDir()
	node := mocknode.MakeNode(t)
	d, inv := node.Inventory()
	kubelet := startKubelet(t, filepath.Join(dir, "kubelet.sock"))
	socket := filepath.Join(dir, deviceplugin.SocketName(resources.NvidiaGPU))
	plugin := deviceplugin.New(resources.NvidiaGPU, inv, nodeagent.NewAllocator(inv, fakePods{pod: pod}, ""), socket)
	if err := plugin.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(plugin.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := plugin.Register(ctx, filepath.Join(dir, "kubelet.sock")); err != nil {
		t.Fatal(err)
	}
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return &harness{node: node, disc: d, inv: inv, client: pluginapi.NewDevicePluginClient(conn), reg: <-kubelet.got}
}

func TestRegistersWithTheKubelet(t *testing.T) {
	h := newHarness(t, nodeagent.Pod{})
	want := fmt.Sprint(pluginapi.Version, " ", deviceplugin.SocketName(resources.NvidiaGPU), " nvidia.com/gpu true")
	got := fmt.Sprint(h.reg.Version, " ", h.reg.Endpoint, " ", h.reg.ResourceName, " ", h.reg.Options.GetPreferredAllocationAvailable)
	if got != want {
		t.Errorf("registration %q, want %q", got, want)
	}
}

func TestListAndWatchReportsXIDAsUnhealthy(t *testing.T) {
	h := newHarness(t, nodeagent.Pod{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := h.client.ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	first, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := health(first); got != "GPU-0:Healthy GPU-1:Healthy GPU-2:Healthy GPU-3:Healthy GPU-4:Healthy GPU-5:Healthy GPU-6:Healthy GPU-7:Healthy" {
		t.Fatalf("first list %s", got)
	}
	w, err := nodeagent.NewHealthWatcher(h.node.Server(), h.disc, h.inv, nodeagent.HealthChecks{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go w.Run(ctx, 50)
	if n := h.node.Server().InjectXID(3, 48, nodeagent.NoInstance); n != 1 {
		t.Fatalf("XID reached %d event sets, want 1", n)
	}
	second, err := stream.Recv()
	if err != nil {
		t.Fatal(err)
	}
	if got := health(second); got != "GPU-0:Healthy GPU-1:Healthy GPU-2:Healthy GPU-3:Unhealthy GPU-4:Healthy GPU-5:Healthy GPU-6:Healthy GPU-7:Healthy" {
		t.Errorf("after XID 48 on GPU 3: %s", got)
	}
}

func TestGetPreferredAllocation(t *testing.T) {
	h := newHarness(t, nodeagent.Pod{})
	resp, err := h.client.GetPreferredAllocation(context.Background(), &pluginapi.PreferredAllocationRequest{
		ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
			AvailableDeviceIDs: []string{"GPU-1", "GPU-2", "GPU-3", "GPU-6"}, AllocationSize: 2,
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	// One NVLink domain: the pair behind one PCIe switch (GPU-2 and GPU-3) is preferred.
	if got := fmt.Sprint(resp.ContainerResponses[0].DeviceIDs); got != "[GPU-2 GPU-3]" {
		t.Errorf("preferred %s, want [GPU-2 GPU-3]", got)
	}
}

func TestAllocateGivesTheAnnotatedDevices(t *testing.T) {
	pod := nodeagent.Pod{Namespace: "ml", Name: "w-0", UID: "u", Annotations: map[string]string{nodeagent.AnnotationDevices: "GPU-6,GPU-7"}}
	h := newHarness(t, pod)
	resp, err := h.client.Allocate(context.Background(), &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: []string{"GPU-0", "GPU-1"}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := resp.ContainerResponses[0]
	want := h.disc.GPUs[6].UUID + "," + h.disc.GPUs[7].UUID
	if c.Envs[nodeagent.EnvVisibleDevices] != want {
		t.Errorf("%s=%q, want %q (the annotation, not the kubelet's GPU-0,GPU-1)", nodeagent.EnvVisibleDevices, c.Envs[nodeagent.EnvVisibleDevices], want)
	}
	if c.Annotations[nodeagent.AnnotationDevices] != "GPU-6,GPU-7" {
		t.Errorf("response annotation %q", c.Annotations[nodeagent.AnnotationDevices])
	}
}

func health(r *pluginapi.ListAndWatchResponse) string {
	out := ""
	for i, d := range r.Devices {
		if i > 0 {
			out += " "
		}
		out += d.ID + ":" + d.Health
	}
	return out
}
