#!/usr/bin/env bash
# Verifies a cairn evidence bundle with nothing but the openssl command line (python3 only
# picks three fields out of the JSON). The same steps as docs/farm.md, "Verifying with
# openssl". Exits 0 and prints "Signature Verified Successfully" when the signature holds.
#   usage: farm/verify_openssl.sh BUNDLE PUBKEY.pem
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 BUNDLE PUBKEY.pem" >&2; exit 2; }
bundle=$(realpath "$1") pub=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
python3 -c 'import json,sys; e=json.load(open(sys.argv[1]))
open("payload.b64","w").write(e["payload"]); open("sig.b64","w").write(e["signatures"][0]["sig"])
open("type.txt","w").write(e["payloadType"])' "$bundle"
openssl base64 -d -A -in payload.b64 -out payload.json
openssl base64 -d -A -in sig.b64 -out sig.bin
type=$(cat type.txt)
# DSSE's pre-authentication encoding: "DSSEv1 <len type> <type> <len payload> <payload>"
{ printf 'DSSEv1 %d %s %d ' "${#type}" "$type" "$(stat -c %s payload.json)"; cat payload.json; } > pae.bin
openssl pkeyutl -verify -pubin -inkey "$pub" -rawin -in pae.bin -sigfile sig.bin
