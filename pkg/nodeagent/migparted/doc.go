// Package migparted reads NVIDIA mig-parted configuration files (api version v1), the
// format NVIDIA's MIG manager takes and the GPU Operator ships as a ConfigMap:
//
//	version: v1
//	mig-configs:
//	  all-balanced:
//	    - device-filter: ["0x20B010DE"]   # optional: PCI device IDs (device<<16 | vendor)
//	      devices: all                    # or a list of GPU indexes
//	      mig-enabled: true
//	      mig-devices: {"1g.5gb": 2, "2g.10gb": 1, "3g.20gb": 1}
//
// Parsing is strict (unknown fields, wrong types, a missing version or mig-enabled are
// errors naming the file, line, config, entry and field). Resolve turns one named config
// into per-GPU plans for a node's GPUs, checking every profile and the placement rules
// of pkg/devices for each GPU's model, as mig-parted applies entries: in file order,
// each to the GPUs its filter and devices select, later entries overriding earlier ones;
// GPUs no entry selects are left as they are. Default is Gantry's shipped config
// (config-default.yaml, also config/nodeagent/mig-config.yaml).
package migparted
