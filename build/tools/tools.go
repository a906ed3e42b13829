//go:build tools

// Package tools pins the development tools `make lint` and `make types` use.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
	_ "github.com/gzuidhof/tygo"
)
