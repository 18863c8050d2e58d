// Package testkit is the one set of helpers the tests of every package share:
// polling for a condition, loggers, the module root, building and running the
// real outpost binary on free ports, the interop clients' location, and small
// HTTP helpers. It is imported by test files only (the import-rule test
// enforces that) and imports no package of ours, so any package's tests may
// use it. appliance/apptest adds an in-process appliance on top.
package testkit
