// Package pluginconfig reads NVIDIA's device-plugin config file (version v1: flags and
// sharing, the file the GPU Operator's devicePlugin.config ConfigMap holds) into the
// node agent's devices.Sharing, so a node keeps the time-slicing or MPS settings it had
// under NVIDIA's plugin. Fields Gantry acts on are read strictly; the plugin's other
// flags (CDI, GDS, device-list strategy, GFD's) are accepted with one warning each
// naming the field, and an unknown field is an error naming the file and line.
package pluginconfig
