//go:build !unix

package workspace

import "os"

// No O_NONBLOCK or O_DIRECTORY here: special files are still refused by fstat after the open.
const (
	oNonblock  = 0
	oDirectory = 0
)

func clearNonblock(*os.File) error { return nil }

func isNoDevice(error) bool { return false }
