package bench

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// clockTick is USER_HZ, the unit of the times in /proc/<pid>/stat: 100 on
// every Linux architecture bookload runs on.
const clockTick = 100.0

// Usage is what one service's process group has used, read from /proc.
type Usage struct {
	CPU   float64 // seconds of user + system time of every live process of the group, plus their reaped children
	HWMkB int64   // sum of VmHWM (peak resident set) over the group's processes
	RSSkB int64   // sum of VmRSS now
	Procs int     // live processes in the group
}

// groupUsage sums /proc/<pid>/stat and /proc/<pid>/status over every live
// process of process group pgid: a service started by `bookload local` is
// its own group, so this covers gunicorn's master and workers, or the JVM.
func groupUsage(pgid int) Usage {
	var u Usage
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	want := strconv.Itoa(pgid)
	for _, f := range stats {
		fields, ok := statFields(f)
		if !ok || fields[0] == "Z" || fields[2] != want {
			continue
		}
		u.CPU += ticks(fields, 11, 12, 13, 14) // utime, stime, cutime, cstime
		hwm, rss := memKB(filepath.Join(filepath.Dir(f), "status"))
		u.HWMkB += hwm
		u.RSSkB += rss
		u.Procs++
	}
	return u
}

// selfCPU is the CPU time of this process (the load generator, and the echo
// server when it runs in-process).
func selfCPU() float64 {
	fields, ok := statFields("/proc/self/stat")
	if !ok {
		return 0
	}
	return ticks(fields, 11, 12)
}

// machineCPU returns busy and total CPU seconds of the whole machine since
// boot (first line of /proc/stat), summed over all CPUs.
func machineCPU() (busy, total float64) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := bytes.Cut(b, []byte{'\n'})
	f := strings.Fields(string(line))
	if len(f) < 5 || f[0] != "cpu" {
		return 0, 0
	}
	for i, v := range f[1:] {
		n, _ := strconv.ParseFloat(v, 64)
		if i >= 8 { // guest time is already counted in user time
			break
		}
		total += n
		if i != 3 && i != 4 { // idle, iowait
			busy += n
		}
	}
	return busy / clockTick, total / clockTick
}

// statFields returns the fields of a /proc stat file after the command name
// (which may contain spaces): fields[0] is the state (field 3).
func statFields(path string) ([]string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	f := strings.Fields(string(b[i+1:]))
	return f, len(f) > 15
}

func ticks(fields []string, idx ...int) float64 {
	var sum float64
	for _, i := range idx {
		n, _ := strconv.ParseFloat(fields[i], 64)
		sum += n
	}
	return sum / clockTick
}

func memKB(status string) (hwm, rss int64) {
	f, err := os.Open(status)
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var dst *int64
		switch {
		case strings.HasPrefix(line, "VmHWM:"):
			dst = &hwm
		case strings.HasPrefix(line, "VmRSS:"):
			dst = &rss
		default:
			continue
		}
		fs := strings.Fields(line)
		if len(fs) >= 2 {
			*dst, _ = strconv.ParseInt(fs[1], 10, 64)
		}
	}
	return hwm, rss
}
