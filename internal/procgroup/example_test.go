//go:build unix

package procgroup_test

import (
	"context"
	"fmt"
	"os/exec"
	"syscall"
	"time"

	"github.com/switchboard-hub/switchboard/internal/procgroup"
)

// A child leads a group of its own, its shell starts another process in it, and ending the
// group ends both: the leader is reaped by Wait, and WaitGone says when the rest is gone too.
func Example() {
	cmd := exec.Command("sh", "-c", "sleep 60 & wait")
	cmd.SysProcAttr = procgroup.GroupAttr()
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return
	}
	pgid := cmd.Process.Pid // the leader's pid is the group's id
	fmt.Println("alive:", procgroup.Alive(pgid))

	if err := procgroup.Signal(pgid, syscall.SIGTERM); err != nil {
		fmt.Println(err)
	}
	_ = cmd.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := procgroup.WaitGone(ctx, pgid); err != nil {
		fmt.Println(err)
	}
	fmt.Println("alive:", procgroup.Alive(pgid))
	// Output:
	// alive: true
	// alive: false
}
