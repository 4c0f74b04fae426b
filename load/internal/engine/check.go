package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
)

// CheckHTTP sends one GET to the request's URL from this machine; any HTTP
// answer will do. Engines that load from here use it before any load, so a
// target that is down fails in a second instead of after a warmup.
func CheckHTTP(ctx context.Context, req Request) error {
	url := req.Target.RequestURL(req.Scenario.Path)
	ctx, cancel := context.WithTimeout(ctx, req.Scenario.Timeout.Std())
	defer cancel()
	hr, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(hr)
	if err != nil {
		return fmt.Errorf("target %s does not answer at %s: %w", req.Target.Name, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.Body.Close()
}
