// Package k6 holds bookload's k6 scripts (NN.kebab-name.js, helpers in lib/),
// embedded so that the bookload binary can run them from any directory.
// k6engine writes them to a temporary directory and runs `k6 run` on them.
package k6

import "embed"

// Scripts is this directory's .js files, lib/ included.
//
//go:embed *.js lib/*.js
var Scripts embed.FS

// ConstantArrivalRate is the script of one repetition.
const ConstantArrivalRate = "01.constant-arrival-rate.js"
