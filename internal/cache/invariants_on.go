//go:build race

package cache

// invariants turns on the checks too costly for production builds: a freed
// buffer is overwritten with poison, and Truncate checks it is not shared.
// Race builds run them, since that is how the tests are run.
const invariants = true
