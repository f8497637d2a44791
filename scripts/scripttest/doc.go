// Package scripttest holds the tests of the shell scripts in scripts/ that
// the other packages' tests do not already run.
package scripttest
