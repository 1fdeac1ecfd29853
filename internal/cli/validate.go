package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/gantry-sched/gantry/pkg/manifest"
	"github.com/spf13/cobra"
)

// newValidateCommand builds `gantry validate -f PATH... [-o json]`: load every manifest,
// print what was understood, or every problem found (and exit non-zero).
func newValidateCommand() *cobra.Command {
	var files []string
	var output string
	cmd := &cobra.Command{
		Use:   "validate -f PATH...",
		Short: "Load manifests and print a summary of the cluster, queues and workloads, or every error",
		Long: "validate reads files, folders (recursively, *.yaml/*.yml/*.json) or - for stdin, and checks\n" +
			"every object and every reference between them. On success it prints nodes and GPUs by\n" +
			"pool, flavors, the cohort tree with quotas, local queues, workloads by queue and events.\n" +
			"On failure it prints every problem as file:line: Kind name: field: message.\n\n" +
			"Kinds read:\n  " + strings.Join(manifest.SupportedKinds(), "\n  "),
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return fmt.Errorf("no input: give manifests with -f PATH (a file, a folder or - for stdin)")
			}
			if output != "text" && output != "json" {
				return fmt.Errorf("--output %q: want text or json", output)
			}
			objs, err := manifest.Load(files, cmd.InOrStdin())
			if err != nil {
				return reportLoadErrors(cmd.ErrOrStderr(), err)
			}
			sum, err := summarize(objs)
			if err != nil {
				return err
			}
			if output == "json" {
				return writeJSON(cmd.OutOrStdout(), sum)
			}
			return printSummary(cmd.OutOrStdout(), sum)
		},
	}
	cmd.Flags().StringArrayVarP(&files, "filename", "f", nil, "manifest file, folder or - for stdin (repeatable)")
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text or json")
	return cmd
}

// reportLoadErrors prints each problem on its own line and returns the command's error.
func reportLoadErrors(w io.Writer, err error) error {
	list, ok := err.(manifest.ErrorList)
	if !ok {
		return err
	}
	for _, e := range list {
		fmt.Fprintln(w, e.Error())
	}
	noun := "problems"
	if len(list) == 1 {
		noun = "problem"
	}
	return fmt.Errorf("%d %s found", len(list), noun)
}
