package devices

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
	"pgregory.net/rapid"
)

// Property: an ID says its GPU, kind, instance, replica and share exactly, for any
// numbers, and formats back to itself.
func TestPropIDFormRoundTrip(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := Device{GPU: rapid.IntRange(0, 1<<20).Draw(t, "gpu"), Kind: DeviceKind(rapid.IntRange(1, 4).Draw(t, "kind"))}
		switch d.Kind {
		case MIGDevice:
			d.Instance = Instance{rapid.SampledFrom([]string{"1g.5gb", "1g.10gb+me", "7g.141gb"}).Draw(t, "profile"), rapid.IntRange(0, 7).Draw(t, "start")}
		case ReplicaDevice:
			d.Replica = rapid.IntRange(0, 64).Draw(t, "replica")
		case ShareDevice:
			d.Milli = resources.MilliGPU(rapid.IntRange(0, 1000).Draw(t, "milli"))
			d.Memory = resources.MiB(rapid.IntRange(0, 1<<20).Draw(t, "memory"))
		}
		got, err := parseIDForm(d.ID())
		if err != nil {
			t.Fatalf("parseIDForm(%q): %v", d.ID(), err)
		}
		if got != d || got.ID() != d.ID() {
			t.Fatalf("parseIDForm(%q) = %+v, want %+v", d.ID(), got, d)
		}
	})
}
