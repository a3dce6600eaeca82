#!/usr/bin/env node
// Signs webhook requests with the npm package `standardwebhooks` (an independent implementation of the Standard
// Webhooks spec), for tests/e2e/test_signing.py. Reads JSON on standard input, so that secrets stay out of the
// process list: one object {"id", "timestamp" (Unix seconds), "body", "secret"} or an array of them. Prints, for
// each, the headers a sender would add: {"webhook-id", "webhook-timestamp", "webhook-signature"}.
"use strict";

const { Webhook } = require("standardwebhooks");

function sign(request) {
  const wh = new Webhook(request.secret);
  const timestamp = new Date(request.timestamp * 1000);
  return {
    "webhook-id": request.id,
    "webhook-timestamp": String(request.timestamp),
    "webhook-signature": wh.sign(request.id, timestamp, request.body),
  };
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const parsed = JSON.parse(input);
  const out = Array.isArray(parsed) ? parsed.map(sign) : sign(parsed);
  process.stdout.write(JSON.stringify(out) + "\n");
});
