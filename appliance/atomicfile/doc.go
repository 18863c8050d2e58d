// Package atomicfile writes files so that a reader, or the file system after
// a crash or a power cut, sees either the old content or the new one, never a
// mix or an empty file: the content goes to a temporary file in the same
// directory, which is given its mode, synced and renamed over the target;
// then the directory is synced so the rename itself is durable. WriteAll
// does that for files that belong together, writing every one before
// renaming any, so that running out of space half-way replaces none.
//
// It is a leaf: it imports nothing of this module, and every package that
// writes a file others rely on (secrets, keys, certificates, the revocation
// list, tokens, the systemd unit, a copied basemap) uses it.
package atomicfile
