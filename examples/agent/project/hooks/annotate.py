#!/usr/bin/env python3
"""A command hook (Claude Code's protocol): reads {"point", "extension", "payload"} as JSON on
stdin, writes {"payload": ...} on stdout to replace the payload. Here, on `error_format`: adds a
hint to errors the model will see."""
import json
import sys

hook = json.load(sys.stdin)
payload = hook["payload"]
if "no such table" in payload["message"]:
    payload["message"] += " (hint from annotate.py: the tables are listed in sqlite_schema)"
json.dump({"payload": payload}, sys.stdout)
