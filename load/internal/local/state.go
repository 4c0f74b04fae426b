package local

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ServiceState is one started service as recorded in the stack file.
type ServiceState struct {
	Name      string            `json:"name"`
	Port      int               `json:"port"`
	PID       int               `json:"pid"`
	StartTime uint64            `json:"start_time"` // /proc start time, guards against pid reuse
	Log       string            `json:"log"`
	Env       map[string]string `json:"env"`
}

// StackState is what `local up` records and `down`/`status` read.
type StackState struct {
	PortBase      int            `json:"port_base"`
	Profile       string         `json:"profile"`
	Reviews       string         `json:"reviews"`
	Repo          string         `json:"repo"`
	Started       time.Time      `json:"started"`
	SupervisorPID int            `json:"supervisor_pid,omitempty"` // foreground bookload, 0 when detached
	SupervisorST  uint64         `json:"supervisor_start_time,omitempty"`
	Services      []ServiceState `json:"services"`
}

func stackDir(state string, base int) string {
	return filepath.Join(state, "stack-"+strconv.Itoa(base))
}

func stackFile(state string, base int) string {
	return filepath.Join(stackDir(state, base), "stack.json")
}

// save writes the stack file atomically (temp file, fsync, rename), so a
// reader never sees half a file.
func (s *StackState) save(state string) error {
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	path := stackFile(state, s.PortBase)
	tmp, err := os.CreateTemp(filepath.Dir(path), ".stack-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func loadStack(state string, base int) (*StackState, error) {
	b, err := os.ReadFile(stackFile(state, base))
	if err != nil {
		return nil, err
	}
	var s StackState
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", stackFile(state, base), err)
	}
	return &s, nil
}

// listStacks returns the port bases that have a stack file.
func listStacks(state string) ([]int, error) {
	dirs, err := filepath.Glob(filepath.Join(state, "stack-*", "stack.json"))
	if err != nil {
		return nil, err
	}
	var bases []int
	for _, d := range dirs {
		name := filepath.Base(filepath.Dir(d))
		if b, err := strconv.Atoi(strings.TrimPrefix(name, "stack-")); err == nil {
			bases = append(bases, b)
		}
	}
	sort.Ints(bases)
	return bases, nil
}

// liveServices returns the recorded services whose process still runs.
func (s *StackState) liveServices() []ServiceState {
	var live []ServiceState
	for _, svc := range s.Services {
		if alive(svc.PID, svc.StartTime) {
			live = append(live, svc)
		}
	}
	return live
}

func (s *StackState) supervisorAlive() bool {
	return s.SupervisorPID != 0 && alive(s.SupervisorPID, s.SupervisorST)
}

func removeStackFile(state string, base int) error {
	err := os.Remove(stackFile(state, base))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
