//go:build ignore

// dumptools writes the tools/list answer of real MCP servers from npm (pinned in test/node) to
// testdata/tools/NAME.json: the negative cases of TestFlagsRealServers. Regenerate after a bump:
//
//	(cd test/node && npm ci)
//	go run ./internal/upstream/testdata/dumptools.go test/node
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: go run ./internal/upstream/testdata/dumptools.go test/node")
		os.Exit(2)
	}
	bin := filepath.Join(os.Args[1], "node_modules", ".bin")
	servers := map[string][]string{
		"everything": {filepath.Join(bin, "mcp-server-everything"), "stdio"},
		"memory":     {filepath.Join(bin, "mcp-server-memory")},
		"filesystem": {filepath.Join(bin, "mcp-server-filesystem"), os.TempDir()},
		// Long, instruction-heavy descriptions ("IMPORTANT:", "ALWAYS", "NEVER"): the hardest
		// negative cases for the phrase checks.
		"desktop-commander": {filepath.Join(bin, "desktop-commander")},
		"chrome-devtools":   {filepath.Join(bin, "chrome-devtools-mcp")},
	}
	for name, argv := range servers {
		if err := dump(name, argv); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", name, err)
			os.Exit(1)
		}
	}
}

func dump(name string, argv []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.Command(argv[0], argv[1:]...)
	// server-memory writes its graph next to itself unless told otherwise.
	// Desktop Commander keeps its settings under HOME: give it a throw-away one.
	home, err := os.MkdirTemp("", "dumptools-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	cmd.Env = append(os.Environ(), "HOME="+home, "MEMORY_FILE_PATH="+filepath.Join(home, "memory.jsonl"),
		// chrome-devtools-mcp: no telemetry watchdog, no update check (there is no network here).
		"CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS=1", "CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS=1")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "dumptools", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return err
	}
	out, err := json.MarshalIndent(map[string]any{"server": cs.InitializeResult().ServerInfo, "tools": res.Tools}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join("internal", "upstream", "testdata", "tools", name+".json"), append(out, '\n'), 0o644)
}
