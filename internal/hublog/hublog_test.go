package hublog_test

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-hub/switchboard/internal/hublog"
)

func newRing(t *testing.T, o hublog.Options) *hublog.Ring {
	t.Helper()
	r, err := hublog.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func msgs(recs []hublog.Record) string {
	var b []string
	for _, r := range recs {
		b = append(b, fmt.Sprintf("%d:%s:%s", r.Seq, r.Level, r.Msg))
	}
	return strings.Join(b, " ")
}

// The ring keeps the newest Size records, numbered without gaps; debug records are not kept.
func TestRingKeepsTheNewest(t *testing.T) {
	r := newRing(t, hublog.Options{Size: 3})
	log := slog.New(r.Handler())
	log.Debug("chatter")
	for i := 1; i <= 5; i++ {
		if i == 4 {
			log.Warn(fmt.Sprintf("m%d", i))
		} else {
			log.Info(fmt.Sprintf("m%d", i))
		}
	}
	if got := msgs(r.Records(hublog.Query{})); got != "3:INFO:m3 4:WARN:m4 5:INFO:m5" {
		t.Errorf("records = %s", got)
	}
	cases := []struct {
		q    hublog.Query
		want string
	}{
		{hublog.Query{MinLevel: slog.LevelWarn}, "4:WARN:m4"},
		{hublog.Query{Limit: 2}, "4:WARN:m4 5:INFO:m5"},
		{hublog.Query{After: 4}, "5:INFO:m5"},
		{hublog.Query{MinLevel: slog.LevelError}, ""},
	}
	for _, c := range cases {
		if got := msgs(r.Records(c.q)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.q, got, c.want)
		}
	}
}

// Attributes read as slog's text handler writes them: WithAttrs and WithGroup apply, groups are
// dotted keys, errors and times are text.
func TestRecordAttrs(t *testing.T) {
	r := newRing(t, hublog.Options{})
	at := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	slog.New(r.Handler()).With("component", "servers").WithGroup("server").
		Warn("exited", "name", "graph", "err", errors.New("exit status 3"), slog.Group("restart", "n", 2, "at", at), slog.Group("empty"))
	recs := r.Records(hublog.Query{})
	if len(recs) != 1 {
		t.Fatalf("records = %+v", recs)
	}
	var got []string
	for _, a := range recs[0].Attrs {
		got = append(got, a.Key+"="+a.Value)
	}
	want := "component=servers server.name=graph server.err=exit status 3 server.restart.n=2 server.restart.at=2026-11-25T08:00:00Z"
	if strings.Join(got, " ") != want {
		t.Errorf("attrs = %q\nwant   %q", strings.Join(got, " "), want)
	}
	if recs[0].Time.IsZero() || recs[0].Level != "WARN" {
		t.Errorf("record = %+v", recs[0])
	}
}

// Teed beside another handler, both get every record at their own level.
func TestTeedBesideStderr(t *testing.T) {
	r := newRing(t, hublog.Options{})
	var stderr bytes.Buffer
	log := slog.New(slog.NewMultiHandler(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelWarn}), r.Handler()))
	log.Info("hub started", "version", "test")
	log.Warn("servers: graph exited")
	if got := msgs(r.Records(hublog.Query{})); got != "1:INFO:hub started 2:WARN:servers: graph exited" {
		t.Errorf("ring = %s", got)
	}
	if s := stderr.String(); strings.Contains(s, "hub started") || !strings.Contains(s, "graph exited") {
		t.Errorf("stderr = %q", s)
	}
}

func TestOnRecord(t *testing.T) {
	r := newRing(t, hublog.Options{})
	var seen []uint64
	cancel := r.OnRecord(func(rec hublog.Record) { seen = append(seen, rec.Seq) })
	log := slog.New(r.Handler())
	log.Info("a")
	log.Info("b")
	cancel()
	log.Info("c")
	if fmt.Sprint(seen) != "[1 2]" {
		t.Errorf("seen = %v", seen)
	}
}

// The file gets text lines with the hub's pid; after Close a late record is kept in memory but
// does not bring the file back.
func TestFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "logs", "hub.log")
	r := newRing(t, hublog.Options{File: file})
	if r.File() != file {
		t.Errorf("File() = %q", r.File())
	}
	log := slog.New(r.Handler()).With("component", "hub")
	log.Info("hub started", "version", "test")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if s := string(b); !strings.Contains(s, `level=INFO msg="hub started" pid=`+fmt.Sprint(os.Getpid())+" component=hub version=test") {
		t.Errorf("file = %q", s)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(file)
	log.Warn("late")
	if _, err := os.Stat(file); err == nil {
		t.Error("a record after Close reopened the file")
	}
	if got := r.Records(hublog.Query{MinLevel: slog.LevelWarn}); len(got) != 1 || got[0].Msg != "late" {
		t.Errorf("records = %+v", got)
	}
}

func TestParseLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, "INFO": slog.LevelInfo, "debug": slog.LevelDebug, "warning": slog.LevelWarn, "Warn": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := hublog.ParseLevel(in); err != nil || got != want {
			t.Errorf("ParseLevel(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := hublog.ParseLevel("loud"); err == nil || !strings.Contains(err.Error(), `level: "loud" is not a level; use debug, info, warn or error`) {
		t.Errorf("error = %v", err)
	}
}
