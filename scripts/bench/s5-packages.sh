#!/usr/bin/env bash
# S5 data packages: not measured yet. It needs a client of the client API
# (enterprise sync: upload, query and download of data packages) in the
# load tool; until then this scenario reports nothing rather than a guess.
echo "S5 packages: not implemented; needs the client API (enterprise sync) in the load tool"
exit 0
