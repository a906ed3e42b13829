package upstream

import (
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A Switchboard hub announces itself to its clients with HubServerName as its serverInfo's name
// and HubDescription(machine) as its description, in both protocol eras (initialize and
// server/discover carry serverInfo alike), so a hub that is another hub's server is shown as
// such, with the machine it runs on.
const (
	HubServerName        = "switchboard"
	hubDescriptionPrefix = "Switchboard hub on "
)

// HubDescription is the serverInfo description of a hub running on machine.
func HubDescription(machine string) string { return hubDescriptionPrefix + machine }

// HubInfo says that a server is another Switchboard hub, and on which machine.
type HubInfo struct {
	// Machine is the host name the hub announced ("" when it did not say).
	Machine string `json:"machine"`
}

// hubOf reads a server's serverInfo: a HubInfo for a Switchboard hub, else nil.
func hubOf(info *sdk.Implementation) *HubInfo {
	if info == nil || info.Name != HubServerName {
		return nil
	}
	machine, _ := strings.CutPrefix(info.Description, hubDescriptionPrefix)
	if machine == info.Description {
		machine = ""
	}
	return &HubInfo{Machine: strings.TrimSpace(machine)}
}

// Label is how the dashboard and the CLI name such a server: "Switchboard hub on <machine>".
func (h *HubInfo) Label() string {
	if h.Machine == "" {
		return "Switchboard hub"
	}
	return HubDescription(h.Machine)
}
