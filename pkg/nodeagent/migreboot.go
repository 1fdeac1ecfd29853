package nodeagent

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
)

// CommandRebooter reboots the node by running a command, for agents allowed to reboot
// for a GPU reset (e.g. ["chroot", "/host", "systemctl", "reboot"] with the host's root
// mounted at /host). Gantry never reboots a node unless configured with one.
type CommandRebooter struct {
	Argv []string
}

// Reboot runs the command; its output goes into the error when it fails.
func (c CommandRebooter) Reboot(ctx context.Context) error {
	if len(c.Argv) == 0 {
		return fmt.Errorf("reboot command is empty")
	}
	out, err := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("reboot command %q: %w: %s", strings.Join(c.Argv, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}
