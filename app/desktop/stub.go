//go:build !desktop && !bindings

package desktop

import (
	"context"
	"errors"

	"github.com/switchboard-hub/switchboard/internal/config"
)

// Built is false in builds without the desktop tag: no Wails, no GTK, no tray.
const Built = false

// Run refuses: this build has no window to open (the command line runs headless instead).
func Run(context.Context, config.Config, string, Options) error {
	return errors.New("this binary was built without the desktop UI; build with `make build`")
}
