package deviceplugin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"

	"github.com/gantry-sched/gantry/pkg/nodeagent"
	"github.com/gantry-sched/gantry/pkg/resources"
)

// Server serves one resource name.
type Server struct {
	pluginapi.UnimplementedDevicePluginServer
	resource resources.Name
	inv      *nodeagent.Inventory
	alloc    *nodeagent.Allocator
	socket   string

	mu   sync.Mutex
	srv  *grpc.Server
	stop chan struct{}
}

var _ pluginapi.DevicePluginServer = (*Server)(nil)

// New makes a server for resource listening on socket (a full path; keep it short:
// unix socket paths are limited to about 108 bytes).
func New(resource resources.Name, inv *nodeagent.Inventory, alloc *nodeagent.Allocator, socket string) *Server {
	return &Server{resource: resource, inv: inv, alloc: alloc, socket: socket}
}

// SocketName is the conventional socket file name for a resource
// ("nvidia.com/mig-1g.5gb" -> "gantry-nvidia.com-mig-1g.5gb.sock").
func SocketName(resource resources.Name) string {
	return "gantry-" + filepath.Base(string(resource)) + ".sock"
}

// Start listens on the socket (replacing a stale one) and serves in the background.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv != nil {
		return fmt.Errorf("device plugin %s: already started", s.resource)
	}
	if err := os.Remove(s.socket); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("device plugin %s: removing stale socket %s: %w", s.resource, s.socket, err)
	}
	lis, err := net.Listen("unix", s.socket)
	if err != nil {
		return fmt.Errorf("device plugin %s: listening on %s: %w", s.resource, s.socket, err)
	}
	s.srv = grpc.NewServer()
	s.stop = make(chan struct{})
	pluginapi.RegisterDevicePluginServer(s.srv, s)
	go func(srv *grpc.Server) { _ = srv.Serve(lis) }(s.srv)
	return nil
}

// Stop ends the streams and the server and removes the socket.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.srv == nil {
		return
	}
	close(s.stop)
	s.srv.Stop()
	s.srv = nil
	_ = os.Remove(s.socket)
}

// Register announces the plugin to the kubelet's registration socket.
func (s *Server) Register(ctx context.Context, kubeletSocket string) error {
	conn, err := grpc.NewClient("unix://"+kubeletSocket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return fmt.Errorf("device plugin %s: connecting to the kubelet at %s: %w", s.resource, kubeletSocket, err)
	}
	defer conn.Close()
	_, err = pluginapi.NewRegistrationClient(conn).Register(ctx, &pluginapi.RegisterRequest{
		Version:      pluginapi.Version,
		Endpoint:     filepath.Base(s.socket),
		ResourceName: string(s.resource),
		Options:      &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true},
	})
	if err != nil {
		return fmt.Errorf("device plugin %s: registering with the kubelet: %w", s.resource, err)
	}
	return nil
}

// GetDevicePluginOptions: preferred allocation is supported; no PreStartContainer.
func (s *Server) GetDevicePluginOptions(context.Context, *pluginapi.Empty) (*pluginapi.DevicePluginOptions, error) {
	return &pluginapi.DevicePluginOptions{GetPreferredAllocationAvailable: true}, nil
}

// ListAndWatch sends the devices now and again after every health change.
func (s *Server) ListAndWatch(_ *pluginapi.Empty, stream grpc.ServerStreamingServer[pluginapi.ListAndWatchResponse]) error {
	changed, cancel := s.inv.Subscribe()
	defer cancel()
	s.mu.Lock()
	stop := s.stop
	s.mu.Unlock()
	for {
		if err := stream.Send(&pluginapi.ListAndWatchResponse{Devices: s.list()}); err != nil {
			return err
		}
		select {
		case <-changed:
		case <-stream.Context().Done():
			return nil
		case <-stop:
			return nil
		}
	}
}

func (s *Server) list() []*pluginapi.Device {
	devs := s.inv.Devices(s.resource)
	out := make([]*pluginapi.Device, len(devs))
	for i, d := range devs {
		health := pluginapi.Healthy
		if !d.Healthy {
			health = pluginapi.Unhealthy
		}
		out[i] = &pluginapi.Device{ID: d.ID, Health: health}
	}
	return out
}

// GetPreferredAllocation answers each container with the device model's pick.
func (s *Server) GetPreferredAllocation(_ context.Context, req *pluginapi.PreferredAllocationRequest) (*pluginapi.PreferredAllocationResponse, error) {
	resp := &pluginapi.PreferredAllocationResponse{}
	for _, c := range req.ContainerRequests {
		ids, err := s.inv.Preferred(s.resource, c.AvailableDeviceIDs, c.MustIncludeDeviceIDs, int(c.AllocationSize))
		if err != nil {
			return nil, err
		}
		resp.ContainerResponses = append(resp.ContainerResponses, &pluginapi.ContainerPreferredAllocationResponse{DeviceIDs: ids})
	}
	return resp, nil
}

// Allocate returns each container's environment and mounts.
func (s *Server) Allocate(ctx context.Context, req *pluginapi.AllocateRequest) (*pluginapi.AllocateResponse, error) {
	resp := &pluginapi.AllocateResponse{}
	for _, c := range req.ContainerRequests {
		ca, err := s.alloc.Allocate(ctx, s.resource, c.DevicesIds)
		if err != nil {
			return nil, err
		}
		cr := &pluginapi.ContainerAllocateResponse{
			Envs:        ca.Envs,
			Annotations: map[string]string{nodeagent.AnnotationDevices: joinIDs(ca.IDs)},
		}
		for _, m := range ca.Mounts {
			cr.Mounts = append(cr.Mounts, &pluginapi.Mount{HostPath: m.HostPath, ContainerPath: m.ContainerPath, ReadOnly: m.ReadOnly})
		}
		resp.ContainerResponses = append(resp.ContainerResponses, cr)
	}
	return resp, nil
}

// PreStartContainer is not used (GetDevicePluginOptions says so).
func (s *Server) PreStartContainer(context.Context, *pluginapi.PreStartContainerRequest) (*pluginapi.PreStartContainerResponse, error) {
	return &pluginapi.PreStartContainerResponse{}, nil
}

func joinIDs(ids []string) string { return strings.Join(ids, ",") }
