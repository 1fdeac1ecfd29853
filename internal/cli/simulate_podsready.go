package cli

import (
	"fmt"
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
	"github.com/gantry-sched/gantry/pkg/sim"
	"github.com/spf13/pflag"
)

// podsReadyFlags are Kueue's waitForPodsReady as simulate flags, over what a Kueue
// Configuration among the files sets (a flag given wins), and the default pod start
// delay of nodes without the gantry.dev/pod-ready-delay annotation.
type podsReadyFlags struct {
	fl        *pflag.FlagSet
	delay     time.Duration
	timeout   time.Duration
	block     bool
	timestamp string
	// fromFile is the Configuration's setting (api.Objects.PodsReady), nil when none.
	fromFile *api.WaitForPodsReady
}

func (p *podsReadyFlags) register(fl *pflag.FlagSet) {
	fl.DurationVar(&p.delay, "pod-ready-delay", 0, "time pods take to become Ready after binding (image pull) on nodes without the gantry.dev/pod-ready-delay annotation; no work is done before")
	p.registerConfig(fl)
}

// registerConfig registers the waitForPodsReady flags alone, which the controller
// shares with simulate (pods on a cluster take the time they take).
func (p *podsReadyFlags) registerConfig(fl *pflag.FlagSet) {
	p.fl = fl
	fl.DurationVar(&p.timeout, "pods-ready-timeout", 0, "enable Kueue's waitForPodsReady: evict (PodsReadyTimeout) and requeue with backoff a workload whose pods are not all Ready this long after admission (default: as the Kueue Configuration among the files says; off without one)")
	fl.BoolVar(&p.block, "pods-ready-block-admission", false, "waitForPodsReady.blockAdmission: admit nothing while an admitted workload's pods are not all Ready")
	fl.StringVar(&p.timestamp, "pods-ready-requeue-timestamp", string(api.RequeueAtEviction), "waitForPodsReady.requeuingStrategy.timestamp: Eviction (queue behind earlier arrivals) or Creation (back at its original place)")
}

// changed reports whether the user gave the flag (a zero value is never a default here).
func (p *podsReadyFlags) changed(name string) bool { return p.fl != nil && p.fl.Changed(name) }

// options is the simulator's PodsReady: the Configuration's waitForPodsReady with the
// given flags over it, or the flags alone (Kueue's defaults for the rest, the requeue
// backoff from --requeue-backoff-* when given).
func (p *podsReadyFlags) options(backoff requeueBackoff) (sim.PodsReady, error) {
	out := sim.PodsReady{Delay: p.delay}
	var cfg *api.WaitForPodsReady
	if p.fromFile != nil {
		c := *p.fromFile
		cfg = &c
	}
	if p.changed("pods-ready-timeout") {
		if cfg == nil {
			c := api.DefaultWaitForPodsReady(p.timeout, false)
			cfg = &c
		}
		cfg.Timeout = p.timeout
	}
	if cfg == nil {
		if p.changed("pods-ready-block-admission") || p.changed("pods-ready-requeue-timestamp") {
			return out, fmt.Errorf("--pods-ready-*: waitForPodsReady is off: give --pods-ready-timeout or a Kueue Configuration that enables it")
		}
		return out, p.check(out)
	}
	if p.changed("pods-ready-block-admission") {
		cfg.BlockAdmission = p.block
	}
	if p.changed("pods-ready-requeue-timestamp") {
		cfg.Requeuing.Timestamp = api.RequeuingTimestamp(p.timestamp)
	}
	backoff.over(&cfg.Requeuing)
	out.Config = cfg
	return out, p.check(out)
}

func (p *podsReadyFlags) check(o sim.PodsReady) error {
	if err := o.Validate(); err != nil {
		return fmt.Errorf("--pod-ready-delay/--pods-ready-*: %w", err)
	}
	return nil
}

// requeueBackoff is which --requeue-backoff-* flags were given, to set waitForPodsReady's
// requeuingStrategy from them too (the flags name Kueue's strategy).
type requeueBackoff struct {
	fl        *pflag.FlagSet
	base, max time.Duration
	limit     int
}

func (b requeueBackoff) over(r *api.PodsReadyRequeuing) {
	if b.fl == nil {
		return
	}
	if b.fl.Changed("requeue-backoff-base") {
		r.BackoffBase = b.base
	}
	if b.fl.Changed("requeue-backoff-max") {
		r.BackoffMax = b.max
	}
	if b.fl.Changed("requeue-backoff-limit") {
		r.Limited, r.BackoffLimit = true, b.limit
	}
}
