// Package local runs the four Bookinfo services as child processes on
// loopback, a "stack" per port base.
package local

import "fmt"

// DefaultPortBase is productpage's port in the default stack.
const DefaultPortBase = 9080

// Services in the order of their port offset from the port base.
var Services = []string{"productpage", "details", "reviews", "ratings"}

// Port returns the loopback port of service in the stack at base:
// productpage base, details base+1, reviews base+2, ratings base+3.
func Port(base int, service string) (int, error) {
	for i, s := range Services {
		if s == service {
			return base + i, nil
		}
	}
	return 0, fmt.Errorf("unknown service %q (want one of productpage, details, reviews, ratings)", service)
}
