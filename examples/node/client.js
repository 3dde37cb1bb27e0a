// Calls a running sidecar from Node.js with @grpc/grpc-js and @grpc/proto-loader.
// Usage: node client.js [ADDRESS]   (default 127.0.0.1:50051; unix:/path works too)
// Prints one JSON line per result; exits non-zero on any error.
"use strict";

const path = require("path");
const grpc = require("@grpc/grpc-js");
const protoLoader = require("@grpc/proto-loader");

const PROTO_ROOT = path.join(__dirname, "..", "..", "proto");
const definition = protoLoader.loadSync("sidecar/v1/sidecar.proto", {
  includeDirs: [PROTO_ROOT],
  keepCase: true,
  enums: String, // verdicts arrive as "VERDICT_DENY", not numbers
  longs: Number,
  defaults: true,
  oneofs: true,
});
const sidecar = grpc.loadPackageDefinition(definition).sidecar.v1;

const address = process.argv[2] || "127.0.0.1:50051";
const credentials = grpc.credentials.createInsecure();
const policy = new sidecar.PolicyService(address, credentials);
const context = new sidecar.ContextService(address, credentials);

function call(client, method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, { deadline: Date.now() + 10000 }, (error, response) =>
      error ? reject(error) : resolve(response)
    );
  });
}

async function main() {
  const session = `node-${process.pid}`;
  const inspected = await call(policy, "Inspect", {
    session_id: session,
    tool_calls: [
      { id: "1", name: "shell", arguments_json: JSON.stringify({ command: "rm -rf /" }) },
      { id: "2", name: "read_file", arguments_json: JSON.stringify({ path: "README.md" }) },
    ],
  });
  for (const verdict of inspected.verdicts) {
    console.log(JSON.stringify({ rpc: "Inspect", id: verdict.tool_call_id, verdict: verdict.verdict, reason: verdict.reason }));
  }

  // user_visible / agent_visible are left unset: the sidecar reads them as true.
  const text = (id, role, body) => ({ id, role, parts: [{ text: { text: body } }] });
  await call(context, "Append", {
    session_id: session,
    messages: [
      text("sys", "ROLE_SYSTEM", "You are a careful agent."),
      text("u1", "ROLE_USER", "List the files."),
      { id: "a1", role: "ROLE_ASSISTANT", parts: [{ tool_call: { id: "c1", name: "shell", arguments: '{"command":"ls"}' } }] },
      { id: "t1", role: "ROLE_TOOL", parts: [{ tool_result: { tool_call_id: "c1", content: "README.md" } }] },
    ],
  });
  const projected = await call(context, "Project", { session_id: session, context_limit: 128000 });
  console.log(JSON.stringify({
    rpc: "Project",
    messages: projected.messages.map((m) => m.id),
    tokens: projected.tokens.tokens,
    source: projected.tokens.source,
  }));
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`error: ${error.message}`);
    process.exit(1);
  }
);
