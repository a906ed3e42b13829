package webview

import "os"

func osTempDir() string { return os.TempDir() }
