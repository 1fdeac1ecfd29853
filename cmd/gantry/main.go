// Command gantry is Gantry's single binary: simulate, explain, bench, validate, convert,
// controller and node-agent.
package main

import (
	"os"

	"github.com/gantry-sched/gantry/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
