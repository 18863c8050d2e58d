// Package fedhost is federation as this server hosts it (docs/federation.md):
// package federation speaks the protocols and keeps the links; fedhost
// builds it from the configuration and the certificate authority, and joins
// it to this server's store: the persistent outbound queue of each
// federate, missions and files over ROL (applied here, notified to local
// clients through the client API, and this server's own mission changes
// sent out), the federates and their group mappings managed at run time
// (synced from the store after each change the API makes and every two
// seconds, for changes made by the command line), this server's federation
// identity, and what `outpost federate list` describes without a running
// server.
//
// Imports: access, admin, broker, config, federation, logx, marti (its
// mission change kinds and notifications), mgmt (the federation page's
// types), netx, pki, store.
package fedhost
