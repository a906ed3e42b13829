// Command gencontrols writes what the dashboard's control table (app/controls.go) implies, so a
// control is declared once:
//
//   - app/desktop/bindings_gen.go: the Wails binding methods of desktop.App, each one call into the
//     table (Wails binds methods by reflection, so they must be real methods);
//   - frontend/src/lib/generated/control.ts: the TypeScript Controls interface the views call,
//     WailsApp (the methods bound as window.go.desktop.App), and the Wails and HTTP implementations
//     that frontend/src/lib/control.ts extends.
//
// Run it from the repository root: go run ./build/gencontrols (make types runs it after tygo,
// whose generated types control.ts refers to). TestGeneratedControlsUpToDate fails when the
// committed files differ from what it writes.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/switchboard-hub/switchboard/app"
)

// The generated files and the tygo configuration, relative to the repository root.
const (
	bindingsFile = "app/desktop/bindings_gen.go"
	clientFile   = "frontend/src/lib/generated/control.ts"
	tygoConfig   = "build/tygo.yaml"
)

func main() {
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	if err := run(*root); err != nil {
		fmt.Fprintln(os.Stderr, "gencontrols:", err)
		os.Exit(1)
	}
}

func run(root string) error {
	files, err := generate(root)
	if err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(root, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// generate returns the generated files by their path from the root.
func generate(root string) (map[string][]byte, error) {
	specs := app.ControlSpecs()
	if err := app.ValidateControls(); err != nil {
		return nil, fmt.Errorf("app/controls.go: %w", err)
	}
	cfg, err := os.ReadFile(filepath.Join(root, tygoConfig))
	if err != nil {
		return nil, err
	}
	namespaces, err := tygoNamespaces(cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", tygoConfig, err)
	}
	bindings, err := goBindings(specs)
	if err != nil {
		return nil, err
	}
	client, err := tsClient(specs, namespaces)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{bindingsFile: bindings, clientFile: client}, nil
}
