#!/usr/bin/env bash
# S6 REST: not measured yet. It needs a client of the management API in the
# load tool; until then this scenario reports nothing rather than a guess.
echo "S6 REST: not implemented; needs the management API in the load tool"
exit 0
