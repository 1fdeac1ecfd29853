package nodeagent_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/gantry-sched/gantry/internal/testing/mocknode"
	"github.com/gantry-sched/gantry/internal/testing/mocknode/nvmlmock"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/nodeagent"
)

func TestParseHealthChecks(t *testing.T) {
	tests := []struct {
		value   string
		want    nodeagent.HealthChecks
		wantErr string
	}{
		{"", nodeagent.HealthChecks{}, ""},
		{"all", nodeagent.HealthChecks{Off: true}, ""},
		{"XIDs", nodeagent.HealthChecks{Off: true}, ""},
		{"48, 79,48", nodeagent.HealthChecks{IgnoredXIDs: []uint64{48, 79}}, ""},
		{"79,all", nodeagent.HealthChecks{Off: true}, ""},
		{"48,x9", nodeagent.HealthChecks{}, `DP_DISABLE_HEALTHCHECKS="48,x9": entry "x9" is neither "all", "xids" nor an XID number`},
		{"-1", nodeagent.HealthChecks{}, `entry "-1"`},
	}
	for _, tc := range tests {
		got, err := nodeagent.ParseHealthChecks(tc.value)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.value, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %+v %v, want %+v", tc.value, got, err, tc.want)
		}
	}
}

// healthCase is one health scenario on a DGX A100 (MIG mixed all-balanced: GPU g holds
// GPU-g/mig-2g.10gb@0, mig-1g.5gb@2, mig-1g.5gb@3, mig-3g.20gb@4).
type healthCase struct {
	name   string
	checks string // DP_DISABLE_HEALTHCHECKS
	// setup acts on the machine before the watcher registers; inject delivers events
	// once it has.
	setup  func(*nvmlmock.Server)
	inject func(*nvmlmock.Server, *nodeagent.Discovery)
	// unhealthy are the device IDs marked; reason a fragment of the first event's reason.
	unhealthy []string
	reason    string
}

func migIDs(gpu int) []string {
	return []string{fmt.Sprintf("GPU-%d/mig-2g.10gb@0", gpu), fmt.Sprintf("GPU-%d/mig-1g.5gb@2", gpu),
		fmt.Sprintf("GPU-%d/mig-1g.5gb@3", gpu), fmt.Sprintf("GPU-%d/mig-3g.20gb@4", gpu)}
}

// giOf is the GPU-instance ID of GPU gpu's MIG device at start slot.
func giOf(d *nodeagent.Discovery, gpu, start int) uint32 {
	for _, m := range d.GPUs[gpu].MIG {
		if m.Instance.Start == start {
			return uint32(m.GpuInstanceID)
		}
	}
	return nodeagent.NoInstance
}

func TestHealthWatcher(t *testing.T) {
	none := func(*nvmlmock.Server) {}
	xid := func(gpu int, x uint64) func(*nvmlmock.Server, *nodeagent.Discovery) {
		return func(s *nvmlmock.Server, _ *nodeagent.Discovery) { s.InjectXID(gpu, x, nvmlmock.NoInstance) }
	}
	tests := []healthCase{
		{"application XIDs are ignored", "", none, func(s *nvmlmock.Server, _ *nodeagent.Discovery) {
			for _, x := range []uint64{13, 31, 43, 45, 68, 109} {
				s.InjectXID(1, x, nvmlmock.NoInstance)
			}
		}, nil, ""},
		{"a critical XID marks the whole GPU", "", none, xid(1, 79), migIDs(1), "XID 79 on GPU 1"},
		{"an XID listed in DP_DISABLE_HEALTHCHECKS is ignored", "48,63", none, xid(1, 48), nil, ""},
		{"an XID not listed still counts", "48,63", none, xid(1, 79), migIDs(1), "XID 79"},
		{"an XID inside a GPU instance marks that MIG device", "", none, func(s *nvmlmock.Server, d *nodeagent.Discovery) {
			s.InjectXID(2, 94, giOf(d, 2, 4))
		}, []string{"GPU-2/mig-3g.20gb@4"}, "XID 94 on GPU 2 (GPU instance"},
		{"a double-bit ECC error marks the whole GPU", "", none, func(s *nvmlmock.Server, _ *nodeagent.Discovery) {
			s.InjectDoubleBitECC(3, nvmlmock.NoInstance)
		}, migIDs(3), "double-bit ECC error on GPU 3"},
		{"a double-bit ECC error inside a GPU instance marks that MIG device", "", none, func(s *nvmlmock.Server, d *nodeagent.Discovery) {
			s.InjectDoubleBitECC(3, giOf(d, 3, 0))
		}, []string{"GPU-3/mig-2g.10gb@0"}, "double-bit ECC error on GPU 3 (GPU instance"},
		{"a GPU without event types is marked at once", "", func(s *nvmlmock.Server) { s.UnsupportedEvents(5) }, nil,
			migIDs(5), "GPU 5 cannot be watched for health events: reading its event types: ERROR_NOT_SUPPORTED"},
		{"a GPU refusing registration is marked at once", "", func(s *nvmlmock.Server) { s.RefuseEventRegistration(6) }, nil,
			migIDs(6), "GPU 6 cannot be watched for health events: registering XID and ECC events: ERROR_NOT_SUPPORTED"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, reasons := runHealth(t, tc)
			if !reflect.DeepEqual(got, tc.unhealthy) {
				t.Errorf("unhealthy %v, want %v", got, tc.unhealthy)
			}
			if tc.reason != "" && (len(reasons) == 0 || !strings.Contains(reasons[0], tc.reason)) {
				t.Errorf("reasons %q, want one containing %q", reasons, tc.reason)
			}
		})
	}
}

// runHealth runs a watcher over tc until a sentinel XID 79 on GPU 7 (injected after
// tc's events) arrives, and returns the devices marked besides GPU 7's, and the reasons.
func runHealth(t *testing.T, tc healthCase) ([]string, []string) {
	t.Helper()
	b := mocknode.MakeNode(t).Strategy(devices.MIGMixed).Layout("all-balanced")
	tc.setup(b.Server())
	d, inv := b.Inventory()
	checks, err := nodeagent.ParseHealthChecks(tc.checks)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var reasons []string
	sentinel := make(chan struct{}, 1)
	w, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, checks, func(ev nodeagent.HealthEvent) {
		mu.Lock()
		defer mu.Unlock()
		if ev.GPU == 7 {
			sentinel <- struct{}{}
			return
		}
		reasons = append(reasons, ev.Reason)
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx, 10) }()
	if tc.inject != nil {
		tc.inject(b.Server(), d)
	}
	if n := b.Server().InjectXID(7, 79, nvmlmock.NoInstance); n != 1 {
		t.Fatalf("sentinel reached %d event sets, want 1", n)
	}
	select {
	case <-sentinel:
	case <-time.After(5 * time.Second):
		t.Fatal("the sentinel event was not handled")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	var got []string
	for _, id := range inv.Unhealthy() {
		if !strings.HasPrefix(id, "GPU-7/") {
			got = append(got, id)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return got, append([]string(nil), reasons...)
}

func TestHealthChecksOffWatchNothing(t *testing.T) {
	b := mocknode.MakeNode(t)
	b.Server().UnsupportedEvents(0)
	d, inv := b.Inventory()
	w, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, nodeagent.HealthChecks{Off: true}, func(ev nodeagent.HealthEvent) {
		t.Errorf("event with checks off: %+v", ev)
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := b.Server().InjectXID(1, 79, nvmlmock.NoInstance); n != 0 {
		t.Errorf("an XID reached %d event sets with checks off, want none registered", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if err := w.Run(ctx, 5); err != nil {
		t.Fatal(err)
	}
	if u := inv.Unhealthy(); len(u) != 0 {
		t.Errorf("unhealthy %v with checks off", u)
	}
}

// TestFailedWaitMarksEveryGPU: when NVML cannot deliver events any more, no GPU can be
// trusted, as NVIDIA's plugin concludes.
func TestFailedWaitMarksEveryGPU(t *testing.T) {
	b := mocknode.MakeNode(t)
	d, inv := b.Inventory()
	var mu sync.Mutex
	gpus := map[int]string{}
	w, err := nodeagent.NewHealthWatcher(b.Server(), d, inv, nodeagent.HealthChecks{}, func(ev nodeagent.HealthEvent) {
		mu.Lock()
		defer mu.Unlock()
		gpus[ev.GPU] = ev.Reason
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Server().FailEventWait(nvml.ERROR_UNKNOWN)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Run(ctx, 5); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Fatal(err)
	}
	if n := len(inv.Unhealthy()); n != 8 {
		t.Errorf("%d devices unhealthy, want all 8: %v", n, inv.Unhealthy())
	}
	mu.Lock()
	defer mu.Unlock()
	if len(gpus) != 8 || !strings.Contains(gpus[0], "waiting for NVML events failed: ERROR_UNKNOWN") {
		t.Errorf("events %v, want one per GPU naming the failure", gpus)
	}
}
