#!/usr/bin/env python3
"""The hook of allow.wat as a command hook: on a payload whose "status" is "pending", answers
{"payload": ...} with the status "allowed"; otherwise answers nothing."""
import json
import sys

hook = json.load(sys.stdin)
payload = hook["payload"]
if payload.get("status") == "pending":
    payload["status"] = "allowed"
    json.dump({"payload": payload}, sys.stdout)
