//go:build tools

// Package tools pins the development tools `make lint` uses.
package tools

import (
	_ "github.com/golangci/golangci-lint/v2/cmd/golangci-lint"
)
