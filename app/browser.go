package app

import (
	"fmt"
	"os/exec"
)

// OpenInBrowser opens url in the user's browser with xdg-open, without waiting for the browser.
func OpenInBrowser(url string) error {
	cmd := exec.Command("xdg-open", url)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("xdg-open: %w", err)
	}
	go func() { _ = cmd.Wait() }() // reaps xdg-open, which returns once the browser has the URL
	return nil
}
