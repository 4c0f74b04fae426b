// Package selfbench holds bookload's own performance benchmark: its maximum
// request rate against fortio's echo handler on loopback, compared with a bare
// fhttp.RunHTTPTest with the same options, and with bookload's engine with
// per-request recording switched off (the cost of recording every latency).
//
//	go test ./load/selfbench -run '^$' -bench MaxRate -benchtime 1x -count 1
//
// BenchmarkMaxRateInterleaved runs the three variants in rotated order for
// several rounds (the machine is shared; interleaving keeps drift out of the
// ratios) and reports the median rates and the two ratios the issue sets
// limits on: bookload/bare >= 0.90 and recording/no-recording >= 0.95.
package selfbench
