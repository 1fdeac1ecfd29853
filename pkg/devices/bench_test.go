package devices_test

import (
	"testing"

	gt "github.com/gantry-sched/gantry/internal/testing"
	"github.com/gantry-sched/gantry/pkg/devices"
)

// Fit of 4 whole GPUs on an 8-GPU H100 node with two NVLink domains, one GPU held.
func BenchmarkFitExclusiveH100(b *testing.B) {
	n := gt.MakeDevices("H100", 8).NVLink(4).Obj()
	one, _ := n.Fit(req(b, "nvidia.com/gpu", 1))
	if err := n.Commit(one); err != nil {
		b.Fatal(err)
	}
	r := req(b, "nvidia.com/gpu", 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := n.Fit(r); ref != nil {
			b.Fatal(ref)
		}
	}
}

// Fit of one MIG instance on an 8-GPU A100 node with the mixed balanced layout, half held.
func BenchmarkFitMIGMixedA100(b *testing.B) {
	n := gt.MakeDevices("A100", 8).MIG(devices.MIGMixed, "all-balanced").Obj()
	for range 8 {
		a, _ := n.Fit(req(b, "nvidia.com/mig-1g.5gb", 1))
		if err := n.Commit(a); err != nil {
			b.Fatal(err)
		}
	}
	r := req(b, "nvidia.com/mig-1g.5gb", 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := n.Fit(r); ref != nil {
			b.Fatal(ref)
		}
	}
}

// Fractional Fit on an 8-GPU node already holding 20 pods of mixed shares.
func BenchmarkFitFractional20Pods(b *testing.B) {
	n := gt.MakeDevices("V100", 8).Fractional().Obj()
	shares := []int{460, 320, 230, 160, 100}
	for i := range 20 {
		a, ref := n.Fit(req(b, "gantry.dev/gpu-milli", shares[i%len(shares)]))
		if ref != nil {
			b.Fatal(ref)
		}
		if err := n.Commit(a); err != nil {
			b.Fatal(err)
		}
	}
	r := req(b, "gantry.dev/gpu-milli", 150)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := n.Fit(r); ref != nil {
			b.Fatal(ref)
		}
	}
}

// Clone of an 8-GPU MIG node: what a per-cycle overlay pays.
func BenchmarkCloneA100MIG(b *testing.B) {
	n := gt.MakeDevices("A100", 8).MIG(devices.MIGMixed, "all-balanced").Obj()
	b.ReportAllocs()
	for b.Loop() {
		_ = n.Clone()
	}
}

// BenchmarkNewNodeDevicesH100 builds one 8-GPU node: node pools and test builders do
// this per node.
func BenchmarkNewNodeDevicesH100(b *testing.B) {
	m, err := devices.LookupModel("H100")
	if err != nil {
		b.Fatal(err)
	}
	gpus, err := devices.NewGPUs(m, 8, devices.Sharing{}, 0)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lookup", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := devices.NewNodeDevices(gpus); err != nil {
				b.Fatal(err)
			}
		}
	})
	// With the model passed in, as node pools do: no catalog build per node.
	b.Run("with-model", func(b *testing.B) {
		models := []devices.Model{m}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := devices.NewNodeDevicesWith(models, gpus); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// Fit of one 2g.10gb through a filter on an 8-GPU A100 node with a dynamic layout, a
// 3g.20gb carved on half the GPUs: every GPU plans where it would carve.
func BenchmarkFitDynamicA100(b *testing.B) {
	n := gt.MakeDevices("A100", 8).MIG(devices.MIGMixed, devices.LayoutDynamic).Obj()
	for range 4 {
		a, ref := n.Fit(claimMIG("3g.20gb", 2))
		if ref != nil {
			b.Fatal(ref)
		}
		if err := n.Commit(devices.Assignment{Devices: a.Devices[:1]}); err != nil {
			b.Fatal(err)
		}
	}
	r := claimMIG("2g.10gb", 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, ref := n.Fit(r); ref != nil {
			b.Fatal(ref)
		}
	}
}
