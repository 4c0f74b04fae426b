package local

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// ServiceStatus is one service of a stack as `status` sees it now.
type ServiceStatus struct {
	ServiceState
	Running bool `json:"running"`
	Healthy bool `json:"healthy"`
}

// StackStatus is one stack as `status` sees it now.
type StackStatus struct {
	PortBase int             `json:"port_base"`
	Profile  string          `json:"profile"`
	Reviews  string          `json:"reviews"`
	Detached bool            `json:"detached"`
	Started  time.Time       `json:"started"`
	Services []ServiceStatus `json:"services"`
}

// Status lists the stacks with a live process. Stacks whose every process
// is gone are reported on out and their state is removed.
func Status(out io.Writer) ([]StackStatus, error) {
	repo, err := FindRepo()
	if err != nil {
		return nil, err
	}
	state := StateDir(repo)
	bases, err := listStacks(state)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Timeout: 500 * time.Millisecond, Transport: &http.Transport{DisableKeepAlives: true}}
	var stacks []StackStatus
	for _, b := range bases {
		st, err := loadStack(state, b)
		if err != nil {
			fmt.Fprintf(out, "removing unreadable stack file: %v\n", err)
			_ = removeStackFile(state, b)
			continue
		}
		if len(st.liveServices()) == 0 && !st.supervisorAlive() {
			fmt.Fprintf(out, "cleaned stale state of a stack on port base %d (no process left)\n", b)
			_ = removeStackFile(state, b)
			continue
		}
		ss := StackStatus{PortBase: b, Profile: st.Profile, Reviews: st.Reviews, Detached: st.SupervisorPID == 0, Started: st.Started}
		for _, svc := range st.Services {
			s := ServiceStatus{ServiceState: svc, Running: alive(svc.PID, svc.StartTime)}
			if s.Running {
				if resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/health", svc.Port)); err == nil {
					resp.Body.Close()
					s.Healthy = resp.StatusCode == http.StatusOK
				}
			}
			ss.Services = append(ss.Services, s)
		}
		stacks = append(stacks, ss)
	}
	return stacks, nil
}
