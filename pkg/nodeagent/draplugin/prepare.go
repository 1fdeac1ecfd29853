package draplugin

import (
	"context"
	"fmt"

	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/dynamic-resource-allocation/kubeletplugin"

	"github.com/gantry-sched/gantry/pkg/dra"
)

// PrepareResourceClaims writes a CDI spec per claim naming the UUIDs of the devices
// allocated to it on this node, records the claim in the checkpoint and returns the CDI
// device IDs per device. A claim prepared before (by this run or an earlier one) gets
// the same answer, its spec rewritten if it was lost. A device that is not this node's,
// is unhealthy, or is already prepared for another claim fails that claim alone.
func (d *Driver) PrepareResourceClaims(_ context.Context, claims []*resourcev1.ResourceClaim) (map[types.UID]kubeletplugin.PrepareResult, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]kubeletplugin.PrepareResult, len(claims))
	for _, c := range claims {
		devs, err := d.prepareLocked(c)
		out[c.UID] = kubeletplugin.PrepareResult{Devices: devs, Err: err}
	}
	return out, nil
}

// prepareLocked prepares one claim.
func (d *Driver) prepareLocked(c *resourcev1.ResourceClaim) ([]kubeletplugin.Device, error) {
	if done, ok := d.cp.Claims[c.UID]; ok {
		if err := writeCDISpec(d.cfg.CDIDir, c.UID, buildCDISpec(c.UID, done.Requests)); err != nil {
			return nil, err
		}
		return resultDevices(done.Devices), nil
	}
	prepared, err := d.claimDevices(c)
	if err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	if len(prepared.Devices) == 0 {
		return nil, nil
	}
	// Carve dynamic MIG devices, then turn MIG mode off on dynamic GPUs given whole,
	// last, once every device checked out, and undo the carvings if the claim cannot be
	// recorded: a claim is prepared whole or not at all.
	if err := d.carveClaim(&prepared); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	if err := d.wholeClaim(&prepared); err != nil {
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	if err := writeCDISpec(d.cfg.CDIDir, c.UID, buildCDISpec(c.UID, prepared.Requests)); err != nil {
		return nil, removeAfter(err, d.uncarve(prepared.Devices))
	}
	d.cp.Claims[c.UID] = prepared
	if err := d.cp.save(d.cfg.PluginDir); err != nil {
		delete(d.cp.Claims, c.UID)
		err = removeAfter(removeAfter(err, removeCDISpec(d.cfg.CDIDir, c.UID)), d.uncarve(prepared.Devices))
		return nil, fmt.Errorf("claim %s/%s: %w", c.Namespace, c.Name, err)
	}
	return resultDevices(prepared.Devices), nil
}

// claimDevices checks the claim's devices on this node and groups their UUIDs by
// request, in allocation order.
func (d *Driver) claimDevices(c *resourcev1.ResourceClaim) (preparedClaim, error) {
	p := preparedClaim{Namespace: c.Namespace, Name: c.Name}
	if c.Status.Allocation == nil {
		return p, fmt.Errorf("not allocated")
	}
	byRequest := map[string]int{}
	for _, r := range c.Status.Allocation.Devices.Results {
		if r.Driver != dra.DriverName || r.Pool != d.node {
			continue
		}
		dev, err := d.checkDevice(c.UID, r)
		if err != nil {
			return p, err
		}
		i, ok := byRequest[r.Request]
		if !ok {
			i = len(p.Requests)
			byRequest[r.Request] = i
			p.Requests = append(p.Requests, requestUUIDs{Request: r.Request})
		}
		p.Requests[i].UUIDs = append(p.Requests[i].UUIDs, dev.UUID)
		p.Devices = append(p.Devices, dev)
	}
	return p, nil
}

// checkDevice is one allocated device, refused if the node cannot hand it over. A
// placement of a dynamic MIG GPU has no UUID yet: it is marked to be carved.
func (d *Driver) checkDevice(claim types.UID, r resourcev1.DeviceRequestAllocationResult) (preparedDevice, error) {
	uuid, ok := d.uuids[r.Device]
	gpu, in, placement := d.placementOf(r.Device)
	if !ok && !placement {
		return preparedDevice{}, fmt.Errorf("request %s: device %s is not a device of node %s (or its UUID is unknown)", r.Request, r.Device, d.node)
	}
	if reason, bad := d.unhealthy[r.Device]; bad {
		return preparedDevice{}, fmt.Errorf("request %s: device %s is unhealthy: %s", r.Request, r.Device, reason)
	}
	admin := r.AdminAccess != nil && *r.AdminAccess
	if other, held := d.cp.holder(claim, r.Pool, r.Device, admin); held {
		o := d.cp.Claims[other]
		return preparedDevice{}, fmt.Errorf("request %s: device %s is prepared for claim %s/%s (%s)", r.Request, r.Device, o.Namespace, o.Name, other)
	}
	dev := preparedDevice{Request: r.Request, Pool: r.Pool, Device: r.Device, UUID: uuid, AdminAccess: admin,
		CDIDeviceID: cdiDeviceID(cdiDeviceName(claim, r.Request))}
	if placement {
		dev.Carved = &carvedMIG{GPU: gpu, Profile: in.Profile, Start: in.Start}
	}
	if g, whole, dyn := d.dynamicDevice(dev); dyn && !admin {
		if why := d.dynamicConflict(string(claim), g, whole); why != "" {
			return preparedDevice{}, fmt.Errorf("request %s: device %s: %s", r.Request, r.Device, why)
		}
	}
	return dev, nil
}

// resultDevices is the kubelet's view of prepared devices.
func resultDevices(devs []preparedDevice) []kubeletplugin.Device {
	out := make([]kubeletplugin.Device, len(devs))
	for i, d := range devs {
		out[i] = kubeletplugin.Device{Requests: []string{d.Request}, PoolName: d.Pool, DeviceName: d.Device,
			CDIDeviceIDs: []string{d.CDIDeviceID}}
	}
	return out
}

// UnprepareResourceClaims removes each claim's CDI spec and checkpoint entry. A claim
// that is not prepared (unprepared before, or never prepared here) succeeds.
func (d *Driver) UnprepareResourceClaims(_ context.Context, claims []kubeletplugin.NamespacedObject) (map[types.UID]error, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make(map[types.UID]error, len(claims))
	for _, c := range claims {
		out[c.UID] = d.unprepareLocked(c)
	}
	return out, nil
}

func (d *Driver) unprepareLocked(c kubeletplugin.NamespacedObject) error {
	if err := removeCDISpec(d.cfg.CDIDir, c.UID); err != nil {
		return err
	}
	held, ok := d.cp.Claims[c.UID]
	if !ok {
		return nil
	}
	// Destroying is idempotent: a failure keeps the claim, and the kubelet's retry
	// destroys what is left.
	if err := d.uncarve(held.Devices); err != nil {
		return fmt.Errorf("claim %s: %w", c, err)
	}
	delete(d.cp.Claims, c.UID)
	if err := d.cp.save(d.cfg.PluginDir); err != nil {
		d.cp.Claims[c.UID] = held
		return fmt.Errorf("claim %s: %w", c, err)
	}
	return nil
}

// removeAfter joins a cleanup's failure to the error that caused the cleanup.
func removeAfter(cause, cleanup error) error {
	if cleanup == nil {
		return cause
	}
	return fmt.Errorf("%w (and %v)", cause, cleanup)
}
