package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Machine describes where the numbers were taken.
type Machine struct {
	CPUs      int    `json:"cpus"`
	CPUModel  string `json:"cpuModel"`
	MemoryGiB int    `json:"memoryGiB"`
	Kernel    string `json:"kernel"`
	GoVersion string `json:"goVersion"`
	// Disk is the file system of the data directory: device, type and
	// mount options.
	Disk string `json:"disk"`
	// KFAVersion is what the kfa binary says of itself.
	KFAVersion string `json:"kfaVersion"`
}

func describeMachine(dataDir, kfaBin string) Machine {
	m := Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPUModel = strings.TrimSpace(v)
				break
			}
		}
		f.Close()
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil {
		m.MemoryGiB = int((uint64(si.Totalram)*uint64(si.Unit) + 1<<29) >> 30)
	}
	m.Disk = mountOf(dataDir)
	if out, err := exec.Command(kfaBin, "version").Output(); err == nil {
		m.KFAVersion = strings.TrimSpace(string(out))
	}
	return m
}

// mountOf finds the mount holding dir in /proc/self/mounts (the longest
// mount point that is a prefix of it).
func mountOf(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	b, err := os.ReadFile("/proc/self/mounts")
	if err != nil {
		return ""
	}
	best, desc := "", ""
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 {
			continue
		}
		mp := f[1]
		if (abs == mp || strings.HasPrefix(abs, strings.TrimSuffix(mp, "/")+"/")) && len(mp) >= len(best) {
			best = mp
			opts := f[3]
			if len(opts) > 60 {
				opts = opts[:60] + "..."
			}
			desc = f[0] + " " + f[2] + " on " + mp + " (" + opts + ")"
		}
	}
	if dev, _, ok := strings.Cut(desc, " "); ok && strings.HasPrefix(dev, "/dev/") {
		name := filepath.Base(dev)
		if rot, err := os.ReadFile("/sys/block/" + strings.TrimRight(name, "0123456789") + "/queue/rotational"); err == nil {
			desc += ", queue/rotational=" + strings.TrimSpace(string(rot))
		}
	}
	return desc
}
