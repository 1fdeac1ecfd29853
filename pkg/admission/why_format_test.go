package admission

import (
	"testing"

	"github.com/gantry-sched/gantry/pkg/resources"
)

// Amounts side by side read in one unit: bytes that are not whole Gi are not printed raw.
func TestWhyReadsMemoryInOneUnit(t *testing.T) {
	w := Why{Kind: WhyFits, Resource: resources.Memory, Flavor: "h100", Amount: 8 << 30, Free: 32014049792, Nominal: 36 << 30}
	if got, want := w.String(), "needs 8Gi memory in flavor h100, 29.8Gi free of nominal 36Gi"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
