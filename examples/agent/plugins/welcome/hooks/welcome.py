#!/usr/bin/env python3
"""The `welcome` folder plugin's command hook on `banners`: reads {"point", "extension",
"payload"} on stdin and appends one banner to the payload's list."""
import json
import sys

hook = json.load(sys.stdin)
payload = hook["payload"]
payload["banners"].append({
    "id": "welcome",
    "kind": "info",
    "title": "welcome",
    "text": "hello from the `welcome` folder plugin (plugins/welcome: a plugin.json, a manifest, this script)",
})
json.dump({"payload": payload}, sys.stdout)
