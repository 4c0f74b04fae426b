// Package proc reads what processes and the machine have used from /proc:
// a local stack's services (each its own process group), this process, and
// the whole machine, so that a measurement can say where the CPU went.
package proc

import (
	"fmt"

	"github.com/prometheus/procfs"
)

// clockTick is USER_HZ, the unit of the children's times (cutime, cstime)
// in /proc/<pid>/stat, which procfs leaves in ticks: 100 on every Linux
// architecture bookload runs on.
const clockTick = 100.0

// Usage is what one service's process group has used, read from /proc.
type Usage struct {
	CPU   float64 // seconds of user + system time of every live process of the group, plus their reaped children
	HWMkB int64   // sum of VmHWM (peak resident set) over the group's processes
	RSSkB int64   // sum of VmRSS now
	Procs int     // live processes in the group
}

// Group sums /proc/<pid>/stat and /proc/<pid>/status over every live
// process of process group pgid: a service started by `bookload local` is
// its own group, so this covers gunicorn's master and workers, or the JVM.
// A process that exits between the listing and the reading is skipped.
func Group(pgid int) Usage {
	var u Usage
	procs, err := procfs.AllProcs()
	if err != nil {
		return u
	}
	for _, p := range procs {
		st, err := p.Stat()
		if err != nil || st.State == "Z" || st.PGRP != pgid {
			continue
		}
		u.CPU += st.CPUTime() + float64(st.CUTime+st.CSTime)/clockTick
		if s, err := p.NewStatus(); err == nil {
			u.HWMkB += int64(s.VmHWM / 1024)
			u.RSSkB += int64(s.VmRSS / 1024)
		}
		u.Procs++
	}
	return u
}

// SelfCPU is the CPU time of this process (the load generator, and the echo
// server when it runs in-process).
func SelfCPU() float64 {
	p, err := procfs.Self()
	if err != nil {
		return 0
	}
	st, err := p.Stat()
	if err != nil {
		return 0
	}
	return st.CPUTime()
}

// MachineCPU returns busy and total CPU seconds of the whole machine since
// boot (the "cpu" line of /proc/stat), summed over all CPUs. Guest time is
// left out: the kernel already counts it in user time.
func MachineCPU() (busy, total float64) {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return 0, 0
	}
	st, err := fs.Stat()
	if err != nil {
		return 0, 0
	}
	c := st.CPUTotal
	total = c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal
	return total - c.Idle - c.Iowait, total
}

// LoadAvg is /proc/loadavg's three load averages, "?" when unreadable.
func LoadAvg() string {
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return "?"
	}
	l, err := fs.LoadAvg()
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.2f %.2f %.2f", l.Load1, l.Load5, l.Load15)
}
