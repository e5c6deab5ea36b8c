#!/usr/bin/env python3
"""Pings per second from a 2ping client's statistics on standard input.

Reads "N pings transmitted, N received, ..., time 1s 73ms" (sysgauge ping
and 2ping print the same lines) and the loss line when there is one; the
rate is received pings divided by the time the client prints.
"""
import re
import sys

text = sys.stdin.read()
m = re.search(r"(\d+) pings? transmitted, (\d+) received.*time ((?:\d+(?:ms|s|m|h) ?)+)", text)
if not m:
    sys.exit("no statistics in: " + text[-300:])
ms = sum(int(v) * {"ms": 1, "s": 1000, "m": 60000, "h": 3600000}[u]
         for v, u in re.findall(r"(\d+)(ms|s|m|h)", m.group(3)))
loss = re.search(r"(\d+) outbound ping losses \((?:[^)]*)\), (\d+) inbound \((?:[^)]*)\), (\d+) undetermined", text)
lost = "; lost out/in/undetermined " + "/".join(loss.groups()) if loss else ""
print("%6.0f pings/s  (%s sent, %s received, %d ms%s)"
      % (int(m.group(2)) * 1000.0 / ms, m.group(1), m.group(2), ms, lost))
