// Package cpuclock reads the calling thread's CPU time, for benchmarks on
// shared machines: wall-clock time also counts the moments the thread was
// descheduled by other jobs, CPU time does not. Benchmarks report it as
// cpu-ns/op beside the usual ns/op.
package cpuclock
