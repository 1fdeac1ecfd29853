package deviceplugin_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/nodeagent/deviceplugin"
)

// restartableKubelet is a fake kubelet's registration service that a test can stop and
// start again on the same socket path, the way a kubelet restart looks to a plugin.
type restartableKubelet struct {
	socket string
	got    chan *pluginapi.RegisterRequest
	srv    *grpc.Server
}

func newRestartableKubelet(t *testing.T, socket string) *restartableKubelet {
	k := &restartableKubelet{socket: socket, got: make(chan *pluginapi.RegisterRequest, 64)}
	t.Cleanup(k.stop)
	return k
}

func (k *restartableKubelet) start(t *testing.T) {
	t.Helper()
	lis, err := net.Listen("unix", k.socket)
	if err != nil {
		t.Fatal(err)
	}
	k.srv = grpc.NewServer()
	pluginapi.RegisterRegistrationServer(k.srv, &fakeKubelet{got: k.got})
	go k.srv.Serve(lis)
}

// stop ends the service; closing the listener deletes the socket file.
func (k *restartableKubelet) stop() {
	if k.srv != nil {
		k.srv.Stop()
		k.srv = nil
	}
}

// registrations waits for n registrations and returns their resource names, sorted.
func (k *restartableKubelet) registrations(t *testing.T, n int) []string {
	t.Helper()
	var names []string
	timeout := time.After(10 * time.Second)
	for len(names) < n {
		select {
		case r := <-k.got:
			names = append(names, r.ResourceName)
		case <-timeout:
			t.Fatalf("%d registrations after 10s (%v), want %d", len(names), names, n)
		}
	}
	slices.Sort(names)
	return names
}

func TestReRegistersWhenTheKubeletSocketIsRecreated(t *testing.T) {
	dir := t.TempDir()
	_, inv := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced").Inventory()
	alloc := nodeagent.NewAllocator(inv, nil, "")
	var servers []*deviceplugin.Server
	for _, r := range inv.Resources() {
		servers = append(servers, deviceplugin.New(r, inv, alloc, filepath.Join(dir, deviceplugin.SocketName(r))))
	}
	kubelet := newRestartableKubelet(t, filepath.Join(dir, "kubelet.sock"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rounds := make(chan struct{}, 8)
	done := make(chan struct{})
	go func() {
		defer close(done)
		deviceplugin.NewRegistrar(servers, kubelet.socket, 10*time.Millisecond, nil).Run(ctx, func() { rounds <- struct{}{} })
	}()

	// The agent may start before the kubelet: it waits for the socket.
	time.Sleep(50 * time.Millisecond)
	kubelet.start(t)
	want := "[nvidia.com/mig-1g.5gb nvidia.com/mig-2g.10gb nvidia.com/mig-3g.20gb]"
	if got := fmt.Sprint(kubelet.registrations(t, 3)); got != want {
		t.Fatalf("first registration %s, want %s", got, want)
	}
	<-rounds

	// Kubelet restart: its socket goes, it empties the plugin directory, a new one listens.
	kubelet.stop()
	removePluginSockets(t, dir)
	kubelet.start(t)
	if got := fmt.Sprint(kubelet.registrations(t, 3)); got != want {
		t.Fatalf("after the kubelet restarted: %s, want %s", got, want)
	}
	<-rounds
	if got := listOnce(t, filepath.Join(dir, deviceplugin.SocketName("nvidia.com/mig-3g.20gb"))); got != 8 {
		t.Errorf("ListAndWatch after re-registration lists %d devices, want 8", got)
	}
	select {
	case <-kubelet.got:
		t.Error("registered again although the kubelet socket did not change")
	case <-time.After(100 * time.Millisecond):
	}
	cancel()
	<-done
	if _, err := os.Stat(filepath.Join(dir, deviceplugin.SocketName("nvidia.com/mig-1g.5gb"))); !os.IsNotExist(err) {
		t.Errorf("plugin socket left behind after Run ended: %v", err)
	}
}

// removePluginSockets deletes every socket but the kubelet's, as a starting kubelet does.
func removePluginSockets(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name() != "kubelet.sock" {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// listOnce reads the first ListAndWatch answer of the plugin at socket.
func listOnce(t *testing.T, socket string) int {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream, err := pluginapi.NewDevicePluginClient(conn).ListAndWatch(ctx, &pluginapi.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := stream.Recv()
	if err != nil {
		t.Fatalf("ListAndWatch: %v", err)
	}
	return len(resp.Devices)
}
