package cli

import (
	"io"
	"strconv"
	"testing"

	"github.com/gantry-sched/gantry/pkg/engine"
)

// `gantry controller` and `gantry simulate` default to the engine's default policy, so
// the same objects get the same decisions on a cluster as in a simulation (the parity
// test runs both with it).
func TestControllerAndSimulateShareDefaults(t *testing.T) {
	root := NewRootCommand(nil, io.Discard, io.Discard)
	def := engine.DefaultPolicy()
	want := map[string]string{"grace": def.Grace.String(), "seed": strconv.FormatInt(def.Seed, 10),
		"head-order": string(engine.HeadOrderPriority)}
	for _, name := range []string{"controller", "simulate"} {
		cmd, _, err := root.Find([]string{name})
		if err != nil || cmd.Name() != name {
			t.Fatalf("command %s: %v", name, err)
		}
		for flag, v := range want {
			f := cmd.Flags().Lookup(flag)
			if f == nil || f.DefValue != v {
				t.Errorf("gantry %s --%s default %v, want %s (engine.DefaultPolicy)", name, flag, f, v)
			}
		}
	}
}
