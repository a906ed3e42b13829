package script

import (
	"context"
	"os"
	"testing"
	"time"
)

func TestProbe(t *testing.T) {
	code := os.Getenv("PROBE")
	start := time.Now()
	res, err := Run(context.Background(), code, nil, nil, Limits{Wall: 2 * time.Second, Memory: 64 << 20})
	t.Logf("%s -> %s %v in %v", code, res.Value, err, time.Since(start))
}
