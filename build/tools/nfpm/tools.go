//go:build tools

// Package tools pins nfpm, the packager `make package` builds into build/bin/nfpm.
package tools

import (
	_ "github.com/goreleaser/nfpm/v2/cmd/nfpm"
)
