package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/engine"
	"github.com/spf13/pflag"
)

// The waitForPodsReady flags enable it or override the Configuration's fields; the
// requeue backoff flags set its requeuing strategy; its sub-flags alone are an error.
func TestSimulatePodsReadyFlags(t *testing.T) {
	file := api.DefaultWaitForPodsReady(30*time.Minute, false)
	cases := []struct {
		name     string
		args     []string
		fromFile *api.WaitForPodsReady
		want     *api.WaitForPodsReady
		err      string
	}{
		{"off by default", nil, nil, nil, ""},
		{"timeout enables it", []string{"--pods-ready-timeout=2m"}, nil,
			ptrTo(api.DefaultWaitForPodsReady(2*time.Minute, false)), ""},
		{"flags over the file", []string{"--pods-ready-block-admission", "--pods-ready-requeue-timestamp=Creation", "--requeue-backoff-base=10s", "--requeue-backoff-limit=3"}, &file,
			&api.WaitForPodsReady{Timeout: 30 * time.Minute, RecoveryTimeout: 30 * time.Minute, BlockAdmission: true,
				Requeuing: api.PodsReadyRequeuing{Timestamp: api.RequeueAtCreation, BackoffBase: 10 * time.Second, BackoffMax: api.PodsReadyBackoffMax, Limited: true, BackoffLimit: 3}}, ""},
		{"sub-flag without waitForPodsReady", []string{"--pods-ready-block-admission"}, nil, nil, "waitForPodsReady is off"},
		{"bad timestamp", []string{"--pods-ready-timeout=1m", "--pods-ready-requeue-timestamp=Later"}, nil, nil, "requeuingStrategy.timestamp"},
		{"negative delay", []string{"--pod-ready-delay=-1s"}, nil, nil, "pod ready delay"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fl := pflag.NewFlagSet("simulate", pflag.ContinueOnError)
			var p podsReadyFlags
			var rq engine.RequeuePolicy
			p.register(fl)
			requeueFlags(fl, &rq)
			if err := fl.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			p.fromFile = tc.fromFile
			got, err := p.options(requeueBackoff{fl: fl, base: rq.BackoffBase, max: rq.BackoffMax, limit: rq.BackoffLimit})
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if (got.Config == nil) != (tc.want == nil) || (got.Config != nil && *got.Config != *tc.want) {
				t.Errorf("config %+v, want %+v", got.Config, tc.want)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }
