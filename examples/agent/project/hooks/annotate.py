#!/usr/bin/env python3
"""A command hook (Claude Code's protocol): reads {"point", "extension", "payload"} as JSON on
stdin, writes {"payload": ...} on stdout to replace the payload. Here: annotates tool output."""
import json
import sys

hook = json.load(sys.stdin)
payload = hook["payload"]
payload["output"] = f"{payload['output']} (checked by {hook['extension']})"
json.dump({"payload": payload}, sys.stdout)
