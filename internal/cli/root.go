// Package cli holds the cobra commands of the gantry binary. Each command reads its
// input once, at the edge, into typed values and hands them to the pipeline packages.
package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Main runs the gantry command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root := NewRootCommand(stdin, stdout, stderr)
	nameAsInvoked(root, os.Args[0]) // "kubectl gantry ..." in usage when run as the kubectl plugin
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return 1
	}
	return 0
}

// NewRootCommand builds the command tree. Subcommands write to the given streams so tests
// can run them in-process.
func NewRootCommand(stdin io.Reader, stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "gantry",
		Short:         "Gantry: GPU admission, gang placement and device accounting in one engine",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	// Subcommands: one constructor per file in this package.
	root.AddCommand(
		newVersionCommand(),
		newControllerCommand(), newConvertCommand(),
		newSimulateCommand(), newExplainCommand(),
		newValidateCommand(),
		newNodeAgentCommand(), newMIGCommand(),
		newBenchCommand(),
		newDashboardCommand(),
		newGetCommand(), newTopCommand(),
	)
	return root
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print Gantry's version",
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprintln(cmd.OutOrStdout(), "gantry", Version)
		},
	}
}

// Version is set at build time with -ldflags "-X .../internal/cli.Version=...".
var Version = "v0.1.0-dev"
