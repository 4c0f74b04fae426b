package local

import (
	"fmt"
	"io"
	"syscall"
	"time"
)

// Down stops the stack on base, or every stack when all is set. A stack
// run in the foreground is stopped through its supervisor, which drains its
// services; a detached one is drained here. Either way any process left
// after the grace period is killed.
func Down(base int, all bool, grace time.Duration, out io.Writer) error {
	repo, err := FindRepo()
	if err != nil {
		return err
	}
	state := StateDir(repo)
	bases := []int{base}
	if all {
		if bases, err = listStacks(state); err != nil {
			return err
		}
		if len(bases) == 0 {
			fmt.Fprintln(out, "no stack is running")
			return nil
		}
	}
	if grace == 0 {
		grace = 15 * time.Second
	}
	for _, b := range bases {
		st, err := loadStack(state, b)
		if err != nil {
			return fmt.Errorf("no stack on port base %d (%w); see: bookload local status", b, err)
		}
		if st.supervisorAlive() {
			_ = syscall.Kill(st.SupervisorPID, syscall.SIGTERM)
			deadline := time.Now().Add(grace + 5*time.Second)
			for st.supervisorAlive() && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
		}
		done := make(chan string, len(st.Services))
		for _, svc := range st.Services {
			go func(svc ServiceState) {
				gone := func() bool { return !alive(svc.PID, svc.StartTime) && !groupAlive(svc.PID) }
				msg := ""
				if !gone() {
					if stopGroup(svc.PID, grace, gone) {
						msg = fmt.Sprintf("%s (pid %d) did not drain within %v and was killed", svc.Name, svc.PID, grace)
					}
				}
				done <- msg
			}(svc)
		}
		for range st.Services {
			if msg := <-done; msg != "" {
				fmt.Fprintln(out, msg)
			}
		}
		if err := removeStackFile(state, b); err != nil {
			return err
		}
		fmt.Fprintf(out, "stopped the stack on port base %d\n", b)
	}
	return nil
}
