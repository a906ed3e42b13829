//go:build !desktop && !bindings

package app

import (
	"context"
	"errors"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// desktopBuilt is false in builds without the desktop tag: no Wails, no GTK, no tray.
const desktopBuilt = false

func runDesktop(context.Context, config.Config, string, launchOptions) error {
	return errors.New("this binary was built without the desktop UI; build with `make build`")
}
