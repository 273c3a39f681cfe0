#!/usr/bin/env bash
# Verifies a cairn evidence bundle with nothing but the openssl command line (and python3
# only to pick two fields out of the JSON). The same steps as in docs/farm.md.
# usage: verify_with_openssl.sh BUNDLE PUBKEY.pem   (works in the current folder)
set -euo pipefail
bundle=$1 pub=$2
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))
open("payload.b64","w").write(e["payload"]); open("sig.b64","w").write(e["signatures"][0]["sig"])
open("type.txt","w").write(e["payloadType"])' "$bundle"
openssl base64 -d -A -in payload.b64 -out payload.json
openssl base64 -d -A -in sig.b64 -out sig.bin
type=$(cat type.txt)
# DSSE's pre-authentication encoding: "DSSEv1 <len type> <type> <len payload> <payload>"
{ printf 'DSSEv1 %d %s %d ' "${#type}" "$type" "$(stat -c %s payload.json)"; cat payload.json; } > pae.bin
openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in pae.bin -sigfile sig.bin
