#!/usr/bin/env python3
"""Writes N modifications of one collection as JSON lines for `digestd
record`, shaped as `digestd bench ingest` makes them: 50,000 items, one
change every 250 ms from 2026-01-01T00:00Z, no changed attributes.

    python3 contrib/bench/modifications.py COLLECTION_UUID N > lines.ndjson

Record them with `--now` past the last instant (N / 14,400 days after
2026-01-01), or they are refused as too old."""
import datetime
import sys
import uuid

coll, n = sys.argv[1], int(sys.argv[2])
base = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
actions = ["edited", "edited", "created", "now"]
out = sys.stdout
for i in range(n):
    item = uuid.UUID(int=0x5EED0000000000000000000000000000 + i % 50000)
    at = base + datetime.timedelta(milliseconds=250 * i)
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    out.write(
        '{"collection":"%s","item":"%s","actor":"bench","action":"%s","at":"%s",'
        '"title":"Item number %d","kind":"event","changes":[]}\n'
        % (coll, item, actions[i % 4], stamp, i % 50000)
    )
