//go:build !linux

package upstream

import "time"

// Child subreapers are Linux's: elsewhere a server's process that leaves its group is not
// followed.
func becomeSubreaper() error { return nil }

func killOrphans(string, int, time.Duration) int { return 0 }

func reapStrays(<-chan struct{}, time.Duration) {}
