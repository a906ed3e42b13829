package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/switchboard-hub/switchboard/internal/audit"
	"github.com/switchboard-hub/switchboard/internal/config"
	"github.com/switchboard-hub/switchboard/internal/hub"
	"github.com/switchboard-hub/switchboard/internal/metrics"
	"github.com/switchboard-hub/switchboard/internal/process"
	"github.com/switchboard-hub/switchboard/mcp"
	"github.com/switchboard-hub/switchboard/mcp/ide"
)

// Stack is one running hub with everything it owns. Desktop, headless and serve modes all build
// the same Stack, so an agent and the dashboard always look at the same state.
type Stack struct {
	Config     config.Config
	Service    *mcp.Service
	Hub        *hub.Hub
	Processes  *process.Service
	IDE        *ide.Subsystem
	Transports *mcp.Transports
	Logger     *slog.Logger
	Audit      *audit.Logger
	Metrics    *metrics.Store
}

// stackOptions tune BuildStack for a mode.
type stackOptions struct {
	logSink  io.Writer // diagnostics and audit echo (stderr in serve mode); nil = file only
	withHub  bool
	startIDE bool
}

// BuildStack wires config into a Service with processes, hub, metrics, audit and the IDE bridge.
func BuildStack(cfg config.Config, version string, so stackOptions) (*Stack, error) {
	if cfg.Workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("workspace: %w", err)
		}
		cfg.Workspace = wd
	}
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s: %w (set data_dir in the config or SWITCHBOARD_DATA_DIR)", cfg.DataDir, err)
	}
	// One writer per stream: the audit echo and the diagnostics logger share one serialised
	// writer, and each writes whole lines, so neither splits the other's lines.
	var sink io.Writer
	if so.logSink != nil {
		sink = audit.LineWriter(so.logSink)
	}
	auditLog, err := audit.New(audit.Options{
		File:       filepath.Join(cfg.LogDir(), "audit.log"),
		MaxSizeMB:  cfg.Audit.MaxSizeMB,
		MaxBackups: cfg.Audit.MaxBackups,
		Stderr:     sink,
	})
	if err != nil {
		return nil, err
	}
	logger := slog.New(slog.DiscardHandler)
	if sink != nil {
		logger = slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelInfo}))
	}
	store, err := metrics.Open(cfg.MetricsDir())
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	procs := process.New(process.Options{
		MaxProcesses: cfg.Process.MaxProcesses,
		BufferSize:   cfg.Process.BufferBytes,
		StopGrace:    time.Duration(cfg.Process.StopGraceSeconds) * time.Second,
	})
	st := &Stack{Config: cfg, Processes: procs, Logger: logger, Audit: auditLog, Metrics: store}
	opts := []mcp.Option{
		mcp.WithWorkspaceRoot(cfg.Workspace),
		mcp.WithVersion(version),
		mcp.WithLogger(logger),
		mcp.WithAudit(auditLog),
		mcp.WithMetricsStore(store),
		mcp.WithProcessService(procs),
		mcp.WithReadOnly(cfg.ReadOnly),
		mcp.WithDisabledTools(cfg.DisabledTools...),
	}
	var pub ide.Publisher
	if so.withHub {
		st.Hub = hub.New(hub.Options{Token: cfg.Hub.Token, Logger: logger})
		opts = append(opts, mcp.WithWSHub(st.Hub))
		pub = st.Hub
	}
	st.IDE = ide.New(pub, ide.WithLaravelURL(cfg.IDE.URL), ide.WithToken(cfg.IDE.Token), ide.WithWorkspaceRoot(cfg.Workspace), ide.WithLogger(logger),
		ide.WithReconnectInterval(cfg.IDE.ReconnectInterval.Duration), ide.WithMaxReconnectInterval(cfg.IDE.MaxReconnectInterval.Duration),
		ide.WithResponseWait(cfg.IDE.ResponseWait.Duration))
	opts = append(opts, mcp.WithSubsystem(st.IDE))
	svc, err := mcp.New(opts...)
	if err != nil {
		_ = procs.Shutdown(context.Background())
		store.Close()
		auditLog.Close()
		return nil, err
	}
	st.Service = svc
	st.Transports = svc.NewTransports(mcp.TransportConfig{
		UnixPath:  cfg.Unix.Path,
		TCPAddr:   cfg.TCP.Addr,
		HTTPAddr:  cfg.HTTP.Addr,
		HTTPToken: cfg.HTTP.Token,
		HubAddr:   cfg.Hub.Addr,
	})
	if so.startIDE {
		st.IDE.Start(context.Background())
	}
	return st, nil
}

// shutdownTimeout bounds a whole shutdown: in-flight calls drain (mcp.DrainTimeout), then
// processes get their stop grace.
const shutdownTimeout = mcp.DrainTimeout + 5*time.Second

// CloseBounded is Close with shutdownTimeout, logging what failed; for deferred calls at exit.
func (st *Stack) CloseBounded() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	if err := st.Close(ctx); err != nil {
		st.Logger.Error("shutdown", "error", err)
	}
}

// Close stops transports, then the service (processes, hub, IDE bridge), then the audit log.
func (st *Stack) Close(ctx context.Context) error {
	err := st.Transports.StopAll(ctx)
	if e := st.Service.Shutdown(ctx); e != nil && err == nil {
		err = e
	}
	st.Metrics.Close() // after the Service: its recorder drains into the store on shutdown
	st.Audit.Close()
	return err
}
