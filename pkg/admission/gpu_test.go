package admission

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/devices"
	"github.com/gantry-sched/gantry/pkg/resources"
)

func TestDefaultGPUAccounting(t *testing.T) {
	flavor := func(labels ...string) *api.ResourceFlavor {
		b := gt.MakeFlavor("f")
		for i := 0; i+1 < len(labels); i += 2 {
			b.Label(labels[i], labels[i+1])
		}
		f := b.Obj()
		return &f
	}
	v := func(kv ...any) resources.Vector {
		out := resources.Vector{}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i].(resources.Name)] = resources.Amount(kv[i+1].(int))
		}
		return out
	}
	tests := []struct {
		name   string
		pod    resources.Vector
		flavor *api.ResourceFlavor
		// want is the pod's milli-GPU; wantErr that the request is refused.
		want    resources.MilliGPU
		wantErr bool
	}{
		{"no GPU", v(resources.CPU, 4000), flavor(), 0, false},
		{"two whole GPUs, no flavor", v(gpu, 2), nil, 2000, false},
		{"MIG 3g on H100 (7 slices)", v(resources.MIGResource("3g.40gb"), 1), flavor(devices.LabelGPUProduct, "NVIDIA-H100-80GB-HBM3"), 428, false},
		{"MIG 2g on A30 (4 slices)", v(resources.MIGResource("2g.12gb"), 1), flavor(devices.LabelGPUProduct, "NVIDIA-A30"), 500, false},
		{"MIG single strategy unit", v(gpu, 2), flavor(devices.LabelGPUProduct, "NVIDIA-A100-SXM4-40GB-MIG-1g.5gb"), 284, false},
		{"MIG single strategy, unknown model", v(gpu, 1), flavor(devices.LabelGPUProduct, "Acme-X-MIG-2g.20gb"), 285, false},
		{"time-sliced unit", v(gpu, 1), flavor(devices.LabelGPUReplicas, "4"), 250, false},
		{"fraction", v(resources.GPUMilli, 300), flavor(), 300, false},
		{"bad replicas label", v(gpu, 1), flavor(devices.LabelGPUReplicas, "zero"), 0, true},
		{"mixed kinds refused", v(gpu, 1, resources.NvidiaGPUShared, 1), flavor(), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DefaultGPUAccounting(tt.pod, tt.flavor)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v, wantErr %v", err, tt.wantErr)
			}
			if err == nil && got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestDecay(t *testing.T) {
	table := newDecayTable()
	const h = 3600_000_000_000 // one hour in ns
	tests := []struct {
		name string
		v    int64
		dt   int64 // ns
		// want is v·2^(-dt/h) rounded down, within tol.
		want, tol int64
	}{
		{"no time", 1 << 40, 0, 1 << 40, 0},
		{"one half-life", 1 << 40, h, 1 << 39, 0},
		{"three half-lives", 1 << 40, 3 * h, 1 << 37, 0},
		{"half a half-life is 1/√2", 1_000_000_000, h / 2, 707_106_781, 1},
		{"a quarter half-life is 2^-0.25", 1_000_000_000, h / 4, 840_896_415, 1},
		{"far past is zero", 1 << 40, 100 * h, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := table.decay(tt.v, durationNS(tt.dt), durationNS(h))
			if d := got - tt.want; d < -tt.tol || d > tt.tol {
				t.Fatalf("decay = %d, want %d ± %d", got, tt.want, tt.tol)
			}
		})
	}
	if got := table.decay(5, durationNS(h), 0); got != 5 {
		t.Fatalf("half-life 0 must not decay, got %d", got)
	}
}
