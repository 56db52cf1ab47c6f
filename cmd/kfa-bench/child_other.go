//go:build !linux

package main

import "syscall"

// childAttr is nil where there is no parent-death signal: a server
// outlives a bench that panics there.
func childAttr() *syscall.SysProcAttr { return nil }
