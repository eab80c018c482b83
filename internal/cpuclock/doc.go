// Package cpuclock reads CPU time, for benchmarks on shared machines:
// wall-clock time also counts the moments a thread was descheduled by other
// jobs, CPU time does not. Thread is the calling thread's, reported as
// cpu-ns/op beside the usual ns/op; Process is every thread's of the
// process, for work that more than one goroutine does.
package cpuclock
