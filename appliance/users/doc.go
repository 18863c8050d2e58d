// Package users is the one place system users and groups are created,
// changed and deleted (access.md), for the management API, the console and
// the command line alike: a user and its certificate package are made
// together or not at all; a deletion revokes the user's certificates before
// the user row goes, so a failure between the steps never leaves a deleted
// user whose certificate still works; a change of role or groups is
// announced (Options.Changed) so the user's open connections follow it.
//
// Imports (of this module): store, pki, and the leaves.
package users
