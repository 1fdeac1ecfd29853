package draplugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gantry-sched/gantry/pkg/devices"
)

// checkpointFile holds the prepared claims in the plugin's directory, so a restarted
// plugin still answers a repeated prepare with the same devices, refuses to hand a
// device to a second claim, and can unprepare what an earlier run prepared (the kubelet
// sends only the claim's UID, namespace and name then).
const checkpointFile = "checkpoint.json"

// checkpointVersion is the format written; a file of another version is refused rather
// than misread.
const checkpointVersion = 1

// checkpoint is the file's content.
type checkpoint struct {
	Version int                         `json:"version"`
	Claims  map[types.UID]preparedClaim `json:"claims"`
}

// preparedClaim is one prepared claim.
type preparedClaim struct {
	Namespace string           `json:"namespace"`
	Name      string           `json:"name"`
	Devices   []preparedDevice `json:"devices"`
	// Requests are the CDI spec's content, kept so a spec file lost with a tmpfs
	// /var/run/cdi is written again on the next prepare.
	Requests []requestUUIDs `json:"requests"`
}

// preparedDevice is one allocated device of a prepared claim.
type preparedDevice struct {
	Request     string `json:"request"`
	Pool        string `json:"pool"`
	Device      string `json:"device"`
	UUID        string `json:"uuid"`
	CDIDeviceID string `json:"cdiDeviceID"`
	AdminAccess bool   `json:"adminAccess,omitempty"`
	// Carved is set for a placement of a dynamic MIG GPU: the instance this plugin
	// created for the claim and destroys when it unprepares it.
	Carved *carvedMIG `json:"carved,omitempty"`
}

// carvedMIG is a MIG device created for a claim.
type carvedMIG struct {
	GPU     int    `json:"gpu"`
	Profile string `json:"profile"`
	Start   int    `json:"start"`
}

func (c *carvedMIG) instance() devices.Instance {
	return devices.Instance{Profile: c.Profile, Start: c.Start}
}

// loadCheckpoint reads dir's checkpoint; none yet is an empty one.
func loadCheckpoint(dir string) (checkpoint, error) {
	path := filepath.Join(dir, checkpointFile)
	cp := checkpoint{Version: checkpointVersion, Claims: map[types.UID]preparedClaim{}}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cp, nil
	}
	if err != nil {
		return checkpoint{}, fmt.Errorf("reading the checkpoint: %w", err)
	}
	if err := json.Unmarshal(data, &cp); err != nil {
		return checkpoint{}, fmt.Errorf("checkpoint %s: %w", path, err)
	}
	if cp.Version != checkpointVersion {
		return checkpoint{}, fmt.Errorf("checkpoint %s: version %d, this plugin reads version %d", path, cp.Version, checkpointVersion)
	}
	if cp.Claims == nil {
		cp.Claims = map[types.UID]preparedClaim{}
	}
	return cp, nil
}

// save writes the checkpoint to dir atomically.
func (cp checkpoint) save(dir string) error {
	data, err := json.MarshalIndent(cp, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	return writeAtomic(filepath.Join(dir, checkpointFile), data)
}

// holder is the other claim a device is prepared for, if any: a device serves one
// claim, except that a claim with admin access (monitoring) shares it with any other.
func (cp checkpoint) holder(self types.UID, pool, device string, admin bool) (types.UID, bool) {
	for uid, c := range cp.Claims {
		if uid == self {
			continue
		}
		for _, d := range c.Devices {
			if d.Pool == pool && d.Device == device && !admin && !d.AdminAccess {
				return uid, true
			}
		}
	}
	return "", false
}
