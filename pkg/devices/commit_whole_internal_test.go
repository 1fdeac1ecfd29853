package devices

import (
	"errors"
	"reflect"
	"testing"

	"pgregory.net/rapid"
)

// wholeTestNode is a node of eight H100s, shared as s, some of them unhealthy and some
// already held whole (built directly: the shared builders in internal/testing import
// this package).
func wholeTestNode(t *rapid.T, s Sharing) *NodeDevices {
	m, err := LookupModel("H100")
	if err != nil {
		t.Fatal(err)
	}
	gpus, err := NewGPUs(m, 8, s, 4)
	if err != nil {
		t.Fatal(err)
	}
	n, err := NewNodeDevices(gpus)
	if err != nil {
		t.Fatal(err)
	}
	for i := range gpus {
		if rapid.Bool().Draw(t, "held") {
			if err := n.Commit(Assignment{Devices: []Device{{GPU: i, Kind: WholeGPU}}}); err != nil {
				t.Fatal(err)
			}
		}
		if rapid.IntRange(0, 4).Draw(t, "unhealthy") == 0 {
			if err := n.SetHealthy(i, false); err != nil {
				t.Fatal(err)
			}
		}
	}
	return n
}

// Property: the in-place way for whole GPUs (applyWhole) leaves a node exactly as the
// general way on copies does, with the same error (or none), for any assignment of
// whole GPUs: unknown, repeated, unhealthy, held or free ones, taken or given back, on
// exclusive and fractional GPUs.
func TestPropApplyWholeMatchesCopies(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sharing := rapid.SampledFrom([]Sharing{{Mode: Exclusive}, {Mode: Fractional}}).Draw(t, "sharing")
		n := wholeTestNode(t, sharing)
		ref := n.Clone()
		var a Assignment
		for range rapid.IntRange(1, 10).Draw(t, "devices") {
			a.Devices = append(a.Devices, Device{GPU: rapid.IntRange(0, 9).Draw(t, "gpu"), Kind: WholeGPU})
		}
		take := rapid.Bool().Draw(t, "take")
		got := n.apply(a, take)
		want := ref.applyCopies(a, take)
		if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
			t.Fatalf("%v take=%v: error %v, on copies %v", a.IDs(), take, got, want)
		}
		var de *DeviceError
		if got != nil && errors.As(want, &de) && !errors.As(got, &de) {
			t.Fatalf("error %v is not a DeviceError as %v is", got, want)
		}
		if !reflect.DeepEqual(n.FreeMilliByGPU(), ref.FreeMilliByGPU()) || !reflect.DeepEqual(n.GPUs(), ref.GPUs()) {
			t.Fatalf("%v take=%v: free %v, on copies %v", a.IDs(), take, n.FreeMilliByGPU(), ref.FreeMilliByGPU())
		}
		for i := range n.gpus {
			if n.gpus[i].wholeUsed != ref.gpus[i].wholeUsed {
				t.Fatalf("GPU-%d held %v, on copies %v", i, n.gpus[i].wholeUsed, ref.gpus[i].wholeUsed)
			}
		}
	})
}

// Property: CopyFrom into a clone that has since changed gives what a fresh clone
// gives, and the copy stays independent of its source.
func TestPropCopyFromMatchesClone(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		src := wholeTestNode(t, Sharing{Mode: Exclusive})
		dst := src.Clone()
		k := rapid.IntRange(0, 7).Draw(t, "gpu")
		_ = dst.Release(Assignment{Devices: []Device{{GPU: k, Kind: WholeGPU}}})
		_ = dst.Commit(Assignment{Devices: []Device{{GPU: (k + 1) % 8, Kind: WholeGPU}}})
		if !dst.CopyFrom(src) {
			t.Fatal("CopyFrom refused a clone of its source")
		}
		if !reflect.DeepEqual(dst.GPUs(), src.GPUs()) || !reflect.DeepEqual(dst.FreeMilliByGPU(), src.FreeMilliByGPU()) {
			t.Fatalf("copy %v, source %v", dst.FreeMilliByGPU(), src.FreeMilliByGPU())
		}
		before := src.FreeMilliByGPU()
		_ = dst.Commit(Assignment{Devices: []Device{{GPU: k, Kind: WholeGPU}}})
		if !reflect.DeepEqual(src.FreeMilliByGPU(), before) {
			t.Fatal("writing the copy changed its source")
		}
	})
}
