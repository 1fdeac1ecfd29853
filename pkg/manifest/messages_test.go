package manifest

import (
	"strings"
	"testing"

	"github.com/gantry-sched/gantry/internal/testing/k8s"
)

// Values out of a field's range are named as such, with the range, instead of as a type
// or fraction problem (which is what the overflowing conversion used to report).
func TestOutOfRangeMessages(t *testing.T) {
	job := func(spec string) string {
		return docs(queueSetup(), "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: ns\n"+
			"  labels: {kueue.x-k8s.io/queue-name: q}\nspec:\n"+spec+
			"  template:\n    spec:\n      containers:\n      - name: c\n        image: x\n")
	}
	tests := []struct {
		name      string
		input     string
		wantField string
		wantMsg   string
	}{
		{
			name:      "int32 field one past its maximum",
			input:     job("  parallelism: 2147483648\n"),
			wantField: "spec.parallelism",
			wantMsg:   "number 2147483648 is out of range: this field holds an integer from -2147483648 to 2147483647",
		},
		{
			name:      "int32 field below its minimum",
			input:     job("  parallelism: -2147483649\n"),
			wantField: "spec.parallelism",
			wantMsg:   "number -2147483649 is out of range: this field holds an integer from -2147483648 to 2147483647",
		},
		{
			name:      "int32 field given a fraction is still a type problem",
			input:     job("  parallelism: 2.5\n"),
			wantField: "spec.parallelism",
			wantMsg:   "wrong type: expected an integer, got number 2.5",
		},
		{
			name:      "GPU quota beyond int64",
			input:     docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "nvidia.com/gpu", "99999999999999999999").YAML()),
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
			wantMsg:   "quantity 99999999999999999999 is too large: nvidia.com/gpu counts at most 9223372036854775807",
		},
		{
			// CPU is counted in millicores, so a value that fits int64 in cores can still overflow.
			name:      "CPU quota that overflows only in millicores",
			input:     docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "cpu", "99999999999999999").YAML()),
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
			wantMsg:   "quantity 99999999999999999 is too large: cpu counts at most 9223372036854775807m",
		},
		{
			name:      "memory quota beyond int64 bytes",
			input:     docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "memory", "99999999999999999999").YAML()),
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
			wantMsg:   "quantity 99999999999999999999 is too large: memory counts at most 9223372036854775807",
		},
		{
			name:      "pod GPU limit beyond int64",
			input:     docs(queueSetup(), k8s.MakeJob("ns", "j").KueueQueue("q").Limit("nvidia.com/gpu", "99999999999999999999").YAML()),
			wantField: "spec.template.spec.containers[0].resources.limits[nvidia.com/gpu]",
			wantMsg:   "quantity 99999999999999999999 is too large: nvidia.com/gpu counts at most 9223372036854775807",
		},
		{
			name:      "a real fraction keeps its own message",
			input:     docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "nvidia.com/gpu", "1500m").YAML()),
			wantField: "spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
			wantMsg:   "quantity 1500m must be a whole number (extended resources are counted in integers)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := loadErrors(t, tt.input)
			if len(list) != 1 {
				t.Fatalf("got %d problems, want 1:\n%v", len(list), list)
			}
			if e := list[0]; e.Field != tt.wantField || e.Msg != tt.wantMsg {
				t.Errorf("got %s: %q\nwant %s: %q", e.Field, e.Msg, tt.wantField, tt.wantMsg)
			}
		})
	}
}

// The largest value that fits is accepted: the range check is not off by one.
func TestLargestQuantityAccepted(t *testing.T) {
	in := docs(k8s.MakeFlavor("f").YAML(), k8s.MakeClusterQueue("a").Quota("f", "nvidia.com/gpu", "9223372036854775807").YAML())
	if list := loadErrors(t, in); len(list) != 0 {
		t.Fatalf("unexpected problems:\n%s", strings.TrimSpace(list.Error()))
	}
}
