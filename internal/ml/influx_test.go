package ml_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/ml"
	"github.com/switchboard-hub/switchboard/internal/ml/mltest"
)

// TestInfluxStatus writes points to a real influxd and reads the status report back.
func TestInfluxStatus(t *testing.T) {
	url := mltest.StartInfluxd(t)
	ctx := context.Background()
	ix, err := ml.NewInflux(url, "lem_test")
	if err != nil {
		t.Fatal(err)
	}
	// The database does not exist yet: a clear error.
	if _, err := ix.Status(ctx); err == nil || !strings.Contains(err.Error(), `database "lem_test" does not exist`) {
		t.Fatalf("missing database: %v", err)
	}
	now := time.Now()
	var pts []ml.Point
	// training: loss falling over 20 steps, 10 of them within the last hour, 20 within the day.
	for i := range 20 {
		at := now.Add(-time.Duration(19-i) * 5 * time.Minute)
		if i < 10 {
			at = now.Add(-time.Duration(20-i) * time.Hour)
		}
		pts = append(pts, ml.Point{Measurement: "training", Tags: map[string]string{"run": "r1"},
			Fields: map[string]any{"loss": 3.0 - 0.1*float64(i), "step": i * 100}, Time: at})
	}
	pts = append(pts, ml.Point{Measurement: "generation", Tags: map[string]string{"backend": "ollama", "model": "llama3.2, q4"},
		Fields: map[string]any{"tokens": 42, "duration_ms": 812.5, "ok": true, "note": `say "hi"`}, Time: now.Add(-2 * time.Minute)})
	pts = append(pts, ml.Point{Measurement: "generation", Tags: map[string]string{"backend": "ollama"},
		Fields: map[string]any{"tokens": 7, "duration_ms": 100.0}, Time: now.Add(-30 * time.Hour)})
	if err := ix.Write(ctx, pts...); err != nil { // creates the database on first write
		t.Fatal(err)
	}
	rep, err := ix.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Measurements) != 2 || rep.Version == "" {
		t.Fatalf("report %+v", rep)
	}
	byName := map[string]ml.MeasurementStatus{}
	for _, m := range rep.Measurements {
		byName[m.Name] = m
	}
	tr := byName["training"]
	if tr.PointsHour != 10 || tr.PointsDay != 20 || tr.LossTrend != "decreasing" || tr.LossField != "loss" || tr.LossSamples != 20 {
		t.Fatalf("training %+v", tr)
	}
	if tr.LossFirst != 3.0 || tr.LossLast < 1.09 || tr.LossLast > 1.11 {
		t.Fatalf("loss range %v → %v", tr.LossFirst, tr.LossLast)
	}
	gen := byName["generation"]
	if gen.PointsHour != 1 || gen.PointsDay != 1 || gen.LossField != "" {
		t.Fatalf("generation %+v", gen)
	}
	if d := gen.LatestTime.Sub(now.Add(-2 * time.Minute)); d > time.Millisecond || d < -time.Millisecond {
		t.Fatalf("latest time %v", gen.LatestTime)
	}
	text := rep.Format()
	for _, want := range []string{"database lem_test: 2 measurement(s)", "training\n", "loss trend: decreasing (3 → 1.1",
		"points: 10 in the last hour, 20 in the last day", "tokens=42", `model="llama3.2, q4"`, `note="say \"hi\""`, "points: 1 in the last hour, 1 in the last day"} {
		if !strings.Contains(text, want) {
			t.Errorf("report lacks %q:\n%s", want, text)
		}
	}
}

func TestInfluxUnreachable(t *testing.T) {
	ix, err := ml.NewInflux("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = ix.Status(context.Background())
	if err == nil || !strings.Contains(err.Error(), "http://127.0.0.1:1 is unreachable") {
		t.Fatalf("%v", err)
	}
	if _, err := ml.NewInflux("localhost:8086", ""); err == nil || !strings.HasPrefix(err.Error(), "influx_url:") {
		t.Fatalf("bad url: %v", err)
	}
}

func TestLossTrend(t *testing.T) {
	for want, vals := range map[string][]float64{
		"decreasing":        {3, 2.9, 2.5, 2.0, 1.8},
		"increasing":        {1, 1.1, 1.5, 2},
		"flat":              {1, 1.001, 0.999, 1},
		"insufficient data": {1, 2},
	} {
		if got := ml.LossTrend(vals); got != want {
			t.Errorf("%v: %s, want %s", vals, got, want)
		}
	}
}
