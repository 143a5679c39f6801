#!/usr/bin/env bash
# acquire -> QUEUED -> complete (NEXT) -> RELEASED against a local Baton (./mvnw quarkus:dev).
# With authentication on, export KEY=<API key>.
set -euo pipefail
B=${BATON_URL:-http://localhost:8080}/v1/locks/order-$RANDOM
H=(-H 'content-type: application/json')
[ -n "${KEY:-}" ] && H+=(-H "Authorization: Bearer $KEY")

echo "# payment service takes the lock"
granted=$(curl -s -XPOST "$B/acquire" "${H[@]}" -d '{"requestId":"pay-1","payload":{"amount":10}}')
echo "$granted"
token=$(echo "$granted" | sed -E 's/.*"token":"([^"]+)".*/\1/')

echo "# stock service arrives: queued, it may walk away"
curl -s -w ' (HTTP %{http_code})\n' -XPOST "$B/acquire" "${H[@]}" -d '{"requestId":"stock-1","payload":{"sku":"A1"}}'

echo "# payment completes and is handed the stock request under the same lock"
curl -s -XPOST "$B/complete" "${H[@]}" -d "{\"token\":\"$token\",\"requestId\":\"pay-1\",\"result\":{\"ok\":true}}"; echo

echo "# it completes stock-1: queue empty, lock released"
curl -s -XPOST "$B/complete" "${H[@]}" -d "{\"token\":\"$token\",\"requestId\":\"stock-1\"}"; echo

echo "# views"
curl -s "$B" "${H[@]}"; echo
curl -s "$B/requests/pay-1" "${H[@]}"; echo
