package app

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/switchboard-hub/switchboard/internal/config"
	mcptransport "github.com/switchboard-hub/switchboard/mcp/transport"
)

// HubControl sends one control request (mcptransport.ControlMethod) to the hub on conn, a connection to
// its Unix socket, and decodes its result into out: how the CLI verbs and a second launch ask the
// running hub.
func HubControl(ctx context.Context, conn net.Conn, action string, params map[string]any, out any) error {
	if params == nil {
		params = map[string]any{}
	}
	params["action"] = action
	req, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": mcptransport.ControlMethod, "params": params})
	if err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if _, err := conn.Write(append(req, '\n')); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	line, err := bufio.NewReaderSize(conn, 1<<20).ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return fmt.Errorf("hub: no answer: %w", err)
	}
	var resp struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &resp); err != nil {
		return fmt.Errorf("hub: %w", err)
	}
	if resp.Error != nil {
		return errors.New(resp.Error.Message)
	}
	return json.Unmarshal(resp.Result, out)
}

// HubInfo is what a running hub says about itself (control action "hub.info"): a second launch
// of the app hands the user over to it instead of failing on its socket.
type HubInfo struct {
	PID int `json:"pid"`
	// Dashboard is the headless dashboard's URL with its token ("" for `switchboard serve`,
	// which serves none).
	Dashboard string `json:"dashboard,omitempty"`
	Socket    string `json:"socket"`
}

// RunningHub asks the hub listening on cfg's Unix socket about itself; ok is false when no hub
// answers there.
func RunningHub(ctx context.Context, cfg config.Config) (HubInfo, bool) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", cfg.Unix.Path)
	if err != nil {
		return HubInfo{}, false
	}
	defer conn.Close()
	var info HubInfo
	if err := HubControl(ctx, conn, "hub.info", nil, &info); err != nil {
		return HubInfo{}, false
	}
	return info, true
}

// HandOff tells the user that a hub already runs and how to reach it, for a launch of the
// desktop app that found one (started from a terminal, headless or `serve`): it opens a headless
// hub's dashboard with open (the user's browser) and says so with notify (a desktop
// notification), and returns the same words for the terminal.
func HandOff(info HubInfo, open func(url string) error, notify func(summary, body string)) string {
	summary := "Switchboard is already running"
	var body string
	switch {
	case info.Dashboard != "":
		body = fmt.Sprintf("A hub started from a terminal runs (pid %d, headless); its dashboard opens in your browser. Quit it to use the app's window and tray.", info.PID)
		if err := open(info.Dashboard); err != nil {
			body = fmt.Sprintf("A hub started from a terminal runs (pid %d, headless); its dashboard: %s (opening it failed: %v). Quit it to use the app's window and tray.", info.PID, info.Dashboard, err)
		}
	default:
		body = fmt.Sprintf("`switchboard serve` runs (pid %d) on %s; clients reach it there. It has no dashboard: quit it to use the app's window and tray.", info.PID, info.Socket)
	}
	notify(summary, body)
	return summary + ": " + body
}

// hubInfo answers "hub.info" for this hub.
func (c *Controller) hubInfo() HubInfo {
	return HubInfo{PID: os.Getpid(), Dashboard: c.st.DashboardURL(), Socket: c.st.Config.Unix.Path}
}
