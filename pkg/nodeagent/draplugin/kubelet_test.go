package draplugin_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	drapbv1 "k8s.io/kubelet/pkg/apis/dra/v1"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/pkg/dra"
	"github.com/gantry-sched/gantry/pkg/nodeagent/draplugin"
)

// dial connects to a unix socket the way the kubelet does.
func dial(t *testing.T, socket string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestKubeletPlugin runs the plugin through Kubernetes' kubelet-plugin helper and plays
// the kubelet: it finds the registration socket, asks GetInfo, reports the registration,
// then prepares and unprepares a claim over the DRA socket the plugin named, and finds
// the node's slice published through the client.
func TestKubeletPlugin(t *testing.T) {
	d := mocknode.MakeNode(t).Discover()
	// Short paths: a unix socket path has at most 107 bytes.
	dir, err := os.MkdirTemp("", "dra")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cfg := draplugin.Config{Log: testWriter{t}, RegistrarDir: filepath.Join(dir, "reg"), PluginDir: filepath.Join(dir, "plugin"), CDIDir: filepath.Join(dir, "cdi")}
	if err := os.MkdirAll(cfg.RegistrarDir, 0o750); err != nil {
		t.Fatal(err)
	}
	c := claim("uid-k", "train", "gpus:gpu-3")
	// The slices are owned by the Node, which the helper looks up.
	client := fake.NewSimpleClientset(c, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: nodeName, UID: "node-uid"}})
	drv, err := draplugin.New(cfg, draplugin.NodeFromDiscovery(nodeName, d, nil))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	helper, err := drv.Start(ctx, client)
	if err != nil {
		t.Fatal(err)
	}
	defer helper.Stop()

	reg := registerapi.NewRegistrationClient(dial(t, filepath.Join(cfg.RegistrarDir, dra.DriverName+"-reg.sock")))
	info, err := reg.GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Type != registerapi.DRAPlugin || info.Name != dra.DriverName || info.Endpoint != filepath.Join(cfg.PluginDir, "dra.sock") ||
		!slices.Contains(info.SupportedVersions, drapbv1.DRAPluginService) {
		t.Fatalf("GetInfo %+v", info)
	}
	if _, err := reg.NotifyRegistrationStatus(ctx, &registerapi.RegistrationStatus{PluginRegistered: true}); err != nil {
		t.Fatal(err)
	}
	if st := helper.RegistrationStatus(); st == nil || !st.PluginRegistered {
		t.Errorf("registration status %+v", st)
	}

	plugin := drapbv1.NewDRAPluginClient(dial(t, info.Endpoint))
	ref := &drapbv1.Claim{Namespace: c.Namespace, Name: c.Name, UID: string(c.UID)}
	prep, err := plugin.NodePrepareResources(ctx, &drapbv1.NodePrepareResourcesRequest{Claims: []*drapbv1.Claim{ref}})
	if err != nil {
		t.Fatal(err)
	}
	got := prep.Claims[string(c.UID)]
	want := &drapbv1.Device{RequestNames: []string{"gpus"}, PoolName: nodeName, DeviceName: "gpu-3", CDIDeviceIDs: []string{"gantry.dev/claim=uid-k-gpus"}}
	if got == nil || got.Error != "" || len(got.Devices) != 1 || !reflect.DeepEqual(got.Devices[0].CDIDeviceIDs, want.CDIDeviceIDs) ||
		got.Devices[0].DeviceName != want.DeviceName || got.Devices[0].PoolName != want.PoolName || !reflect.DeepEqual(got.Devices[0].RequestNames, want.RequestNames) {
		t.Fatalf("NodePrepareResources %+v, want %+v", got, want)
	}
	if _, err := os.Stat(filepath.Join(cfg.CDIDir, "gantry.dev-claim_uid-k.json")); err != nil {
		t.Errorf("CDI spec: %v", err)
	}
	// A claim the API server does not have fails alone.
	ghost := &drapbv1.Claim{Namespace: "team-a", Name: "ghost", UID: "uid-g"}
	prep, err = plugin.NodePrepareResources(ctx, &drapbv1.NodePrepareResourcesRequest{Claims: []*drapbv1.Claim{ghost}})
	if err == nil && (prep.Claims["uid-g"] == nil || prep.Claims["uid-g"].Error == "") {
		t.Errorf("preparing a missing claim: %+v", prep)
	}

	un, err := plugin.NodeUnprepareResources(ctx, &drapbv1.NodeUnprepareResourcesRequest{Claims: []*drapbv1.Claim{ref}})
	if err != nil {
		t.Fatal(err)
	}
	if r := un.Claims[string(c.UID)]; r == nil || r.Error != "" {
		t.Errorf("NodeUnprepareResources %+v", un.Claims)
	}
	if _, err := os.Stat(filepath.Join(cfg.CDIDir, "gantry.dev-claim_uid-k.json")); !os.IsNotExist(err) {
		t.Errorf("CDI spec after unprepare: %v", err)
	}

	// The slice reaches the API server through the helper's ResourceSlice controller.
	var published []resourcev1.ResourceSlice
	err = wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := client.ResourceV1().ResourceSlices().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		published = l.Items
		return len(published) > 0, nil
	})
	if err != nil {
		t.Fatalf("no ResourceSlice published: %v", err)
	}
	s := published[0].Spec
	if s.Driver != dra.DriverName || s.Pool.Name != nodeName || s.NodeName == nil || *s.NodeName != nodeName || len(s.Devices) != 8 {
		t.Errorf("published slice: driver %s pool %+v node %v, %d devices", s.Driver, s.Pool, s.NodeName, len(s.Devices))
	}
}

// testWriter logs the plugin's background errors into the test's output.
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p))
	return len(p), nil
}
