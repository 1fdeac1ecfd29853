package trace

import (
	"errors"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Any input, however malformed, gives rows or positioned errors, never a panic.
func TestTraceReadersNeverPanic(t *testing.T) {
	headers := []string{
		"sn,cpu_milli,memory_mib,gpu,model",
		"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time",
		"timestamp,duration,num_gpus,gpu_time,cluster",
		"name,submit_at,duration,pods,cpu,gpu,node_selector",
	}
	readers := []func(string) error{
		func(s string) error { _, err := ReadOpenBNodes(strings.NewReader(s), "f"); return err },
		func(s string) error { _, err := ReadOpenBPods(strings.NewReader(s), "f"); return err },
		func(s string) error { _, err := ReadPhillyJobs(strings.NewReader(s), "f"); return err },
		func(s string) error { _, err := ReadGenericWorkloads(strings.NewReader(s), "f"); return err },
	}
	rapid.Check(t, func(t *rapid.T) {
		i := rapid.IntRange(0, len(readers)-1).Draw(t, "format")
		cell := rapid.StringMatching(`[a-z0-9.|=;:" -]{0,8}`)
		rows := rapid.SliceOfN(rapid.SliceOfN(cell, 1, 12), 0, 5).Draw(t, "rows")
		var b strings.Builder
		b.WriteString(headers[i] + "\n")
		for _, r := range rows {
			b.WriteString(strings.Join(r, ",") + "\n")
		}
		err := readers[i](b.String())
		if err == nil {
			return
		}
		var list TraceErrors
		if !errors.As(err, &list) {
			t.Fatalf("error %v is not a TraceErrors", err)
		}
		for _, e := range list {
			if e.File != "f" || e.Line < 1 || e.Line > len(rows)+1 {
				t.Fatalf("error %q has no valid position", e.Error())
			}
		}
	})
}
