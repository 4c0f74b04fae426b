package local

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// UpAll starts several detached stacks at once (the services take seconds
// to start, so side-by-side stacks come up in the time of one); if any
// fails, the ones that did start are stopped again. msgs gets stop messages.
func UpAll(ctx context.Context, stacks []Config, msgs io.Writer) error {
	errs := make([]error, len(stacks))
	var wg sync.WaitGroup
	for i := range stacks {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			errs[i] = Up(ctx, stacks[i], Options{Detach: true, Out: io.Discard})
			if errs[i] != nil {
				errs[i] = fmt.Errorf("%s stack on port base %d: %w", stacks[i].Profile, stacks[i].PortBase, errs[i])
			}
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		for i, st := range stacks {
			if errs[i] == nil {
				_ = Down(st.PortBase, false, 0, msgs)
			}
		}
		return err
	}
	return nil
}
