// Package identity is who a CoT connection is, and stays (access.md, and
// architecture.md "Identity" and "Groups on the relay"): the certificate
// identities of mutual-TLS connections resolved to principals with their
// groups (cached until the next change of who may see what, so a connect
// storm of one user's devices costs one lookup); the uid bindings the broker
// makes, written to the store off the relay's path so that a restart opens
// no window for an impostor; and the upkeep that makes a change of roles or
// groups, made in this process or by another one (the command line), reach
// the connections already open.
//
// Imports: access, broker, cotsession, logx, store.
package identity
