// Package admin is what the `outpost` subcommands do to an appliance's data,
// whether its server runs or not: open the data directory and the
// certificate authority the way `outpost run` does, back up and restore,
// issue and revoke certificates, manage users, roles, groups and API users
// (through the users service, as the management API does), read the audit
// log, and read a running server's metrics. The composition root (package
// appliance) opens its data through it too.
//
// Imports (of this module): config, store, pki, users, and the leaves.
package admin
