// Package scratch holds helpers for memory that hot loops reuse across iterations.
package scratch
