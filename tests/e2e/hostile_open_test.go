package e2e

import (
	"fmt"
	"sync"
	"testing"
)

// knownOpen are the hostile-input failures not fixed yet, each with what a
// client sees. A test that meets one logs it as KNOWN OPEN instead of
// failing, so `make test` stays a verdict on everything else; and
// TestKnownOpenDefectsAreStillOpen (last in the package) fails when one no
// longer shows, so this list cannot outlive its defects.
var knownOpen = map[string]struct{ test, why string }{
	// Cases beyond the contract's wire table (every row of which all four
	// services answer alike).
	// Jetty's HttpConnection (an internal class) refuses a blank Host 400
	// ("Blank Host") once the head is parsed, with no HttpCompliance
	// violation to allow it; only rewriting the bytes before its parser would.
	"reviews: empty Host": {"TestValidHostsAreServed", "an empty Host, valid by the grammar (RFC 3986 3.2.2), is refused 400"},
}

var (
	openMu   sync.Mutex
	openSeen = map[string]bool{}
	// openRan: the tests that can meet a known open defect and ran, so a
	// -run that skips them does not judge their entries.
	openRan = map[string]bool{}
)

// failOrKnown fails t, unless key is a known open defect: then it logs it.
func failOrKnown(t *testing.T, key, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if k, ok := knownOpen[key]; ok {
		openMu.Lock()
		openSeen[key] = true
		openMu.Unlock()
		t.Logf("KNOWN OPEN (%s; %s): %s", key, k.why, msg)
		return
	}
	t.Error(msg)
}

// ranOpen records that test, one that can meet known open defects, ran.
func ranOpen(test string) {
	openMu.Lock()
	openRan[test] = true
	openMu.Unlock()
}
