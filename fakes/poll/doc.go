// Package poll is the one polling helper the tests share: it checks a
// condition until it holds or a deadline passes, and fails the test
// saying what it waited for and how long. Only tests import it.
//
// A poll is for state the test cannot be told about (a process list, a
// count behind a lock, a row another node writes); where the code under
// test can signal, the test waits on that channel instead. The caller
// names the deadline: the helper never widens it.
package poll
