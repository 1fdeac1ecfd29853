package draplugin

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// The Container Device Interface spec a prepared claim gets: one CDI device per request
// of the claim, each setting NVIDIA_VISIBLE_DEVICES to the UUIDs of the GPUs or MIG
// devices allocated to that request. NVIDIA's container runtime hook reads that variable
// and mounts the devices, as it does for the device plugin's Allocate answer. The spec
// format is CDI's (github.com/cncf-tags/container-device-interface, SPEC.md); only the
// fields Gantry writes are modelled.
const (
	// cdiVersion is the oldest CDI version whose fields this spec uses.
	cdiVersion = "0.5.0"
	// cdiVendor and cdiClass make the spec's kind, gantry.dev/claim; the claim UID in
	// every device name keeps names unique, so a runtime's cached spec never answers
	// for a later claim.
	cdiVendor = "gantry.dev"
	cdiClass  = "claim"
	// envVisibleDevices is the variable NVIDIA's runtime hook reads.
	envVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
)

// cdiSpec is a CDI spec file.
type cdiSpec struct {
	Version string      `json:"cdiVersion"`
	Kind    string      `json:"kind"`
	Devices []cdiDevice `json:"devices"`
}

// cdiDevice is one CDI device of a spec.
type cdiDevice struct {
	Name           string            `json:"name"`
	ContainerEdits cdiContainerEdits `json:"containerEdits"`
}

// cdiContainerEdits are the edits a CDI device makes to a container.
type cdiContainerEdits struct {
	Env []string `json:"env,omitempty"`
}

// cdiKind is the spec's kind.
func cdiKind() string { return cdiVendor + "/" + cdiClass }

// cdiDeviceName is the CDI device of one request of a claim. A subrequest's name
// ("gpus/large") carries a slash, which CDI names do not allow.
func cdiDeviceName(claim types.UID, request string) string {
	return string(claim) + "-" + strings.ReplaceAll(request, "/", "-")
}

// cdiDeviceID is the fully qualified CDI device ID the kubelet hands the runtime.
func cdiDeviceID(name string) string { return cdiKind() + "=" + name }

// cdiSpecPath is the claim's spec file in dir.
func cdiSpecPath(dir string, claim types.UID) string {
	return filepath.Join(dir, cdiVendor+"-"+cdiClass+"_"+string(claim)+".json")
}

// requestUUIDs are the UUIDs of one request's devices, in allocation order.
type requestUUIDs struct {
	Request string
	UUIDs   []string
}

// buildCDISpec is the spec of one claim.
func buildCDISpec(claim types.UID, requests []requestUUIDs) cdiSpec {
	s := cdiSpec{Version: cdiVersion, Kind: cdiKind()}
	for _, r := range requests {
		s.Devices = append(s.Devices, cdiDevice{Name: cdiDeviceName(claim, r.Request),
			ContainerEdits: cdiContainerEdits{Env: []string{envVisibleDevices + "=" + strings.Join(r.UUIDs, ",")}}})
	}
	return s
}

// writeCDISpec writes the claim's spec atomically (a runtime reading the directory
// never sees half a file).
func writeCDISpec(dir string, claim types.UID, s cdiSpec) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("CDI spec of claim %s: %w", claim, err)
	}
	return writeAtomic(cdiSpecPath(dir, claim), data)
}

// removeCDISpec deletes the claim's spec; a spec already gone is no error (unprepare is
// repeated after restarts).
func removeCDISpec(dir string, claim types.UID) error {
	err := os.Remove(cdiSpecPath(dir, claim))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing the CDI spec of claim %s: %w", claim, err)
	}
	return nil
}

// writeAtomic writes data to a temporary file beside path and renames it into place.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // gone after the rename; removes a failed write
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
