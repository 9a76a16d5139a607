package embed

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill the worker when git-synaptic dies, so
// that a killed command leaves no worker behind.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
