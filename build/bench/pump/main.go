// Command pump is the floor of the upstream benchmark (build/bench/upstream_bench.mjs): the least
// any proxy that runs as a process of its own between a stdio client and a stdio server can
// cost. It starts the server given as its arguments and copies bytes both ways, without reading
// a message, so its row shows what one more process on the path costs on the machine at hand.
//
//	pump node server.js stdio
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pump COMMAND [ARG...]")
		os.Exit(2)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pump:", err)
		os.Exit(1)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pump:", err)
		os.Exit(1)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pump:", err)
		os.Exit(1)
	}
	go func() {
		_, _ = io.Copy(in, os.Stdin) // ends when the client closes its end
		_ = in.Close()               // so the server sees EOF and exits
	}()
	_, _ = io.Copy(os.Stdout, out) // ends when the server exits
	if err := cmd.Wait(); err != nil {
		fmt.Fprintln(os.Stderr, "pump:", err)
		os.Exit(1)
	}
}
