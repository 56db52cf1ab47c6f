package main

import "syscall"

// childAttr makes a server the bench starts die with the bench: a panic
// or a kill of the bench skips its deferred stops, and a kfa serve left
// behind keeps following its database and holding the CPU every later
// run measures on.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
