package manifest

import (
	"time"

	"github.com/gantry-sched/gantry/pkg/api"
)

// podsReadyWire is waitForPodsReady of Kueue's Configuration, both versions: enable
// exists in v1beta1 only (in v1beta2 the section's presence enables it). Durations
// are strings so a bad one is an error naming its field.
type podsReadyWire struct {
	Enable            *bool   `json:"enable"`
	Timeout           *string `json:"timeout"`
	BlockAdmission    *bool   `json:"blockAdmission"`
	RecoveryTimeout   *string `json:"recoveryTimeout"`
	RequeuingStrategy *struct {
		Timestamp          *string `json:"timestamp"`
		BackoffLimitCount  *int32  `json:"backoffLimitCount"`
		BackoffBaseSeconds *int32  `json:"backoffBaseSeconds"`
		BackoffMaxSeconds  *int32  `json:"backoffMaxSeconds"`
	} `json:"requeuingStrategy"`
}

const v1beta1Config = "config.kueue.x-k8s.io/v1beta1"

// podsReadyOf turns a Configuration's waitForPodsReady into the setting, with Kueue's
// defaults for its version: v1beta1 enables it with enable: true (timeout 5m,
// blockAdmission true); v1beta2 enables it unless the feature gate
// DisableWaitForPodsReady is on (timeout 30m, blockAdmission false), section or not.
// nil: disabled. Errors name the field.
func podsReadyOf(apiVersion string, in *podsReadyWire, gates any, c errs) *api.WaitForPodsReady {
	const p = "waitForPodsReady"
	var out api.WaitForPodsReady
	if apiVersion == v1beta1Config {
		if in == nil || in.Enable == nil || !*in.Enable {
			return nil
		}
		out = api.DefaultWaitForPodsReady(api.PodsReadyTimeoutV1beta1, true)
	} else {
		if in != nil && in.Enable != nil {
			c.add(p+".enable", "not a field of %s: the section's presence enables waitForPodsReady", apiVersion)
			return nil
		}
		if gateOn(gates, "DisableWaitForPodsReady") {
			return nil
		}
		out = api.DefaultWaitForPodsReady(api.PodsReadyTimeoutV1beta2, false)
		if in == nil {
			return &out
		}
	}
	ok := true
	if in.Timeout != nil {
		out.Timeout, ok = configDuration(*in.Timeout, p+".timeout", c)
		out.RecoveryTimeout = out.Timeout // Kueue: recoveryTimeout defaults to timeout
	}
	if in.RecoveryTimeout != nil {
		var rok bool
		out.RecoveryTimeout, rok = configDuration(*in.RecoveryTimeout, p+".recoveryTimeout", c)
		ok = ok && rok
	}
	if in.BlockAdmission != nil {
		out.BlockAdmission = *in.BlockAdmission
	}
	if rs := in.RequeuingStrategy; rs != nil {
		r := &out.Requeuing
		if rs.Timestamp != nil {
			r.Timestamp = api.RequeuingTimestamp(*rs.Timestamp)
		}
		if rs.BackoffLimitCount != nil {
			r.Limited, r.BackoffLimit = true, int(*rs.BackoffLimitCount)
		}
		if rs.BackoffBaseSeconds != nil {
			r.BackoffBase = time.Duration(*rs.BackoffBaseSeconds) * time.Second
		}
		if rs.BackoffMaxSeconds != nil {
			r.BackoffMax = time.Duration(*rs.BackoffMaxSeconds) * time.Second
		}
	}
	if !ok {
		return nil
	}
	if err := out.Validate(); err != nil {
		c.add(p, "%v", err)
		return nil
	}
	out.Source = c.src
	return &out
}

// configDuration reads a Kubernetes duration ("5m", "90s") of the Configuration.
func configDuration(v, field string, c errs) (time.Duration, bool) {
	d, err := time.ParseDuration(v)
	if err != nil {
		c.add(field, "%q: want a duration such as 5m or 90s", v)
		return 0, false
	}
	return d, true
}

// gateOn reports whether featureGates sets name to true.
func gateOn(gates any, name string) bool {
	m, ok := gates.(map[string]any)
	if !ok {
		return false
	}
	on, _ := m[name].(bool)
	return on
}

// setPodsReady records a Configuration's waitForPodsReady (nil: it sets none); a second
// Configuration setting it is an error naming both.
func (l *loader) setPodsReady(pr *api.WaitForPodsReady, c errs) {
	if pr == nil {
		return
	}
	if l.objs.PodsReady != nil {
		c.add("waitForPodsReady", "set again: %s sets it already", l.objs.PodsReady.Source)
		return
	}
	l.objs.PodsReady = pr
}
